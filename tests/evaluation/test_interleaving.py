"""The eval runs every method on a question before the next one, so shared-machine load hits all alike."""

from petrichor.evaluation.dataset import Dataset, EvalDoc, EvalQuestion
from petrichor.evaluation.harness import _run_interleaved
from petrichor.evaluation.retrieval import Ranking, Retrieved
from petrichor.evaluation.scoring import Scorer


class Recorder:
    def __init__(self, name: str, calls: list):
        self.name, self.calls = name, calls

    def retrieve(self, question: str) -> Ranking:
        self.calls.append((question, self.name))
        return Ranking([Retrieved("d1", "text")], 1.0)


def test_each_question_is_asked_of_every_method_in_turn_with_a_rotating_start():
    docs = (EvalDoc("d1", "T", "text"),)
    questions = tuple(EvalQuestion(f"q{i}", f"question {i}", ("d1",)) for i in range(4))
    calls: list = []
    retrievers = {n: Recorder(n, calls) for n in ("a", "b", "c")}
    outcomes = _run_interleaved(Dataset("toy", docs, questions), retrievers, Scorer(questions), lambda m: None)
    assert [c[0] for c in calls] == [q.question for q in questions for _ in range(3)]
    assert [c[1] for c in calls] == ["a", "b", "c", "b", "c", "a", "c", "a", "b", "a", "b", "c"]
    assert all(len(o) == 4 and all(x.doc_rank == 1 for x in o) for o in outcomes.values())
