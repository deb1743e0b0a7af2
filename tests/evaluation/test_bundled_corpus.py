"""The harness on the bundled corpus: 24 questions with a gold article and a verbatim answer passage.

Uses the session's already-built snapshot; only the cheap BM25 baseline is built here (the vector baseline
would embed the whole corpus again).
"""

from __future__ import annotations

import json

import pytest

from petrichor.evaluation.answers import agent_answer, summarise_answers
from petrichor.evaluation.baselines import NaiveBM25Retriever, chunk_corpus
from petrichor.evaluation.dataset import EvalDoc, EvalQuestion
from petrichor.evaluation.retrieval import PetrichorRetriever
from petrichor.evaluation.scoring import Scorer, summarise
from petrichor_serving.recall.query_vectors import QUERY_VECTORS
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess

FIXTURE = REPO / "tests" / "fixtures" / "corpus_questions.jsonl"


def _questions() -> list[EvalQuestion]:
    out = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out.append(
            EvalQuestion(
                qid=row["qid"],
                question=row["question"],
                gold_doc_ids=(row["gold_path"],),
                gold_passages=(row["answer_passage"],),
                lang="zh" if row["qid"].startswith("zh") else "en",
            )
        )
    return out


@pytest.fixture(scope="module")
def bundled(served_snapshot):
    snapshot, embedder = served_snapshot
    doc_of_article = {a["article_id"]: a["path"] for a in snapshot.articles.values()}
    docs = [EvalDoc(a["path"], a["title"], a["content"]) for a in snapshot.articles.values()]
    questions = _questions()
    return snapshot, embedder, doc_of_article, docs, questions, Scorer(questions)


@pytest.fixture(scope="module")
def petrichor_outcomes(bundled):
    snapshot, embedder, doc_of_article, _, questions, scorer = bundled
    # the process-wide query-vector cache, so the agent test below does not embed the questions again
    retriever = PetrichorRetriever(snapshot, doc_of_article, embedder=embedder, cache=QUERY_VECTORS)
    return [scorer.outcome(q, retriever.retrieve(q.question)) for q in questions]


def test_every_gold_article_is_in_the_snapshot(bundled):
    _, _, doc_of_article, _, questions, _ = bundled
    assert {q.gold_doc_ids[0] for q in questions} <= set(doc_of_article.values())


def test_petrichor_retrieval_floors(bundled, petrichor_outcomes):
    questions = bundled[4]
    summary = summarise(questions, petrichor_outcomes)
    # measured: doc R@1 0.88, R@5 1.0, MRR@10 0.93; passage R@5 1.0, R@10 1.0 (0.79 and 0.89 with the
    # reference rerank): the floors leave room for two or three questions to move
    assert summary["doc"]["recall@1"] >= 0.75, summary
    assert summary["doc"]["recall@5"] >= 0.9, summary
    assert summary["doc"]["mrr@10"] >= 0.85, summary
    assert summary["chunk"]["recall@5"] >= 0.85, summary
    assert summary["chunk"]["recall@10"] >= 0.9, summary
    assert summary["latency_ms"]["p50"] is not None and summary["recall_ms"]["p50"] > 0


def test_petrichor_is_not_worse_than_the_bm25_baseline(bundled, petrichor_outcomes):
    _, _, _, docs, questions, scorer = bundled
    baseline = NaiveBM25Retriever(chunk_corpus(docs))
    naive = summarise(questions, [scorer.outcome(q, baseline.retrieve(q.question)) for q in questions])
    ours = summarise(questions, petrichor_outcomes)
    # BM25 over 512-character windows ranks the right article first more often here (each topic exists in
    # both languages and the vector routes pull in the other language's twin), so only recall is compared
    assert ours["doc"]["recall@5"] >= naive["doc"]["recall@5"], (ours, naive)
    assert ours["chunk"]["recall@5"] >= naive["chunk"]["recall@5"], (ours, naive)


def test_every_answer_passage_is_reachable_in_some_chunk(bundled):
    snapshot, embedder, doc_of_article, _, _, scorer = bundled
    retriever = PetrichorRetriever(snapshot, doc_of_article, embedder=embedder)
    assert scorer.reachable(retriever.all_chunks()) == 1.0


def test_agent_citations_come_from_gold_articles(bundled):
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_answer_model

    snapshot, embedder, doc_of_article, _, questions, scorer = bundled
    chat = make_answer_model(load_settings().with_paths("unused"))
    outcomes = [agent_answer(q, snapshot, chat, embedder, doc_of_article) for q in questions]
    summary = summarise_answers(questions, outcomes, scorer)
    assert summary["exact_match"] is None and summary["f1"] is None  # no short answers in this set
    assert summary["citations_per_answer"] >= 1, summary
    assert summary["citation_doc_precision"] >= 0.7, summary
    assert summary["citation_precision"] is not None
