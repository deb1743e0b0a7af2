"""Answer evaluation on unanswerable questions: null queries kept, cross-set questions, the answer baseline,
not-found rates, the printed answers table and the threshold sweep over recorded signals."""

from __future__ import annotations

import json

from rich.console import Console

from petrichor.evaluation import answerability_sweep as sweep
from petrichor.evaluation.answers import AnswerOutcome, Quote, summarise_answers, summarise_not_found, top_sentence_answer, without_gate
from petrichor.evaluation.dataset import EvalQuestion, cross_questions, load_dataset
from petrichor.evaluation.report import print_report
from petrichor.evaluation.retrieval import Ranking, Retrieved
from petrichor.evaluation.scoring import Scorer


def _write(directory, docs, questions):
    directory.mkdir()
    (directory / "docs.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    (directory / "qa.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")


def test_null_queries_are_kept_as_unanswerable_and_short_free_text_answers_count(tmp_path):
    _write(
        tmp_path / "news",
        [{"doc_id": "d1", "title": "t", "content": "x"}],
        [
            {"qid": "a", "question": "Did Google win?", "answer": "Yes", "gold_doc_ids": ["d1"], "question_type": "inference_query"},
            {"qid": "b", "question": "Who knows?", "answer": "Insufficient information.", "gold_doc_ids": [], "question_type": "null_query"},
            {"qid": "c", "question": "What does it do?", "answer": "It deploys the portal with a Helm chart.", "gold_doc_ids": ["d1"]},
        ],
    )
    ds = load_dataset(tmp_path / "news")
    assert [q.qid for q in ds.questions] == ["a", "c"] and ds.skipped == 1
    assert [q.qid for q in ds.unanswerable] == ["b"] and ds.unanswerable[0].answers_all == ()
    assert ds.questions[0].answers_all == ("Yes",) and ds.questions[0].subset == "inference_query"
    assert ds.questions[1].answers_all == ()  # a sentence is not a short answer


def test_cross_questions_are_spread_over_the_other_set_and_have_no_gold(tmp_path):
    _write(
        tmp_path / "other",
        [{"doc_id": "z", "title": "t", "content": "x"}],
        [{"qid": str(n), "question": f"问题{n}？", "answer": ["甲"], "gold_doc_ids": ["z"]} for n in range(10)],
    )
    picked = cross_questions(tmp_path / "other", 3)
    assert [q.qid for q in picked] == ["other:0", "other:3", "other:6"]
    assert all(not q.has_gold and q.subset == "cross:other" and q.lang == "zh" and not q.answers_all for q in picked)
    assert cross_questions(tmp_path / "other", 0) == ()


def test_not_found_rates_per_kind_and_false_not_found():
    unanswerable = [
        EvalQuestion("n1", "q", ()),
        EvalQuestion("n2", "q", ()),
        EvalQuestion("x:1", "q", (), subset="cross:x"),
        EvalQuestion("x:2", "q", (), subset="cross:x"),
    ]
    outcomes = [
        AnswerOutcome("n1", "nothing", (), 1.0),
        AnswerOutcome("n2", "an answer", (Quote("an answer", "d"),), 1.0),
        AnswerOutcome("x:1", "nothing", (), 1.0),
        AnswerOutcome("x:2", "nothing", (), 1.0),
    ]
    rates = summarise_not_found(unanswerable, outcomes)
    assert rates == {
        "all": {"rate": 0.75, "questions": 4},
        "in_domain": {"rate": 0.5, "questions": 2},
        "off_topic": {"rate": 1.0, "questions": 2},
        "null": {"rate": 0.5, "questions": 2},
        "cross:x": {"rate": 1.0, "questions": 2},
    }
    answerable = [EvalQuestion("a1", "q", ("d",), answers_all=("5",)), EvalQuestion("a2", "q", ("d",), answers_all=("6",))]
    summary = summarise_answers(
        answerable, [AnswerOutcome("a1", "5 [1]", (Quote("5", "d"),), 1.0), AnswerOutcome("a2", "no", (), 1.0)], Scorer(answerable)
    )
    assert summary["false_not_found"] == 0.5 and summary["questions"] == 2 and summary["answer_contains_gold"] == 0.5


def test_the_withheld_answer_is_what_the_gate_set_aside():
    gated = AnswerOutcome(
        "a", "not found", (), 1.0, {"withheld": {"answer": "Five are kept. [1]", "citations": [{"quote": "Five are kept.", "article_id": "art"}]}}
    )
    before = without_gate(gated, {"art": "d1"})
    assert before.answer == "Five are kept. [1]" and before.quotes == (Quote("Five are kept.", "d1"),) and not before.not_found
    plain = AnswerOutcome("b", "x", (Quote("x", "d"),), 1.0)
    assert without_gate(plain, {}) is plain


class _Fixed:
    name = "fixed"

    def __init__(self, items):
        self.items = items

    def retrieve(self, question):
        return Ranking(list(self.items), 1.0)


def test_the_answer_baseline_quotes_the_top_chunk_sentence_sharing_most_question_words():
    chunk = "Snapshots are published atomically. By default five snapshots are kept. Builds take minutes."
    q = EvalQuestion("q", "How many snapshots are kept by default?", ("d1",))
    got = top_sentence_answer(q, _Fixed([Retrieved(None, ""), Retrieved("d1", chunk), Retrieved("d2", "Kept by default: snapshots.")]))
    assert got.answer == "By default five snapshots are kept." and got.quotes == (Quote(got.answer, "d1"),)
    zh = top_sentence_answer(EvalQuestion("z", "快照默认保留几个？", ("d",), lang="zh"), _Fixed([Retrieved("d", "构建很快。快照默认保留五个。")]))
    assert zh.answer == "快照默认保留五个。"
    assert top_sentence_answer(q, _Fixed([])).not_found


def _signal_row(dataset, kind, semantic, coverage, holds=None, cited=True):
    verdict = {"signal": None, "signals": {"semantic": semantic, "coverage": coverage, "type_held": None}}
    return {
        "dataset": dataset,
        "qid": f"{kind}{semantic}{coverage}",
        "kind": kind,
        "lang": "en",
        "cited": cited,
        "answerability": verdict,
        "holds_gold": holds,
    }


def test_the_sweep_finds_thresholds_that_separate_answerable_from_unanswerable(tmp_path):
    rows = [_signal_row("a", "answerable", 0.88 + i / 1000, 0.8, holds=True) for i in range(19)]
    rows += [_signal_row("a", "answerable", 0.82, 0.6, holds=False)]
    rows += [_signal_row("a", "null", 0.86, 0.2), _signal_row("b", "cross:a", 0.79, 0.0), _signal_row("b", "cross:a", 0.83, 0.7)]
    rows += [_signal_row("b", "null", None, None, cited=False) | {"answerability": None}]
    path = tmp_path / "signals.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    best, ungated = sweep.sweep(sweep.load([path]), max_false=0.05)
    assert ungated["not_found"] == 0.25 and ungated["false_not_found"] == 0.0
    assert best["not_found"] == 1.0 and best["false_not_found"] == 0.05  # the one weak answerable question is lost
    assert best["per_set"]["b"]["not_found cross:a"] == 1.0 and best["per_set"]["a"]["answerable"] == 20
    strict = sweep.score(sweep.load([path]), None, 0.5, None)
    assert strict["not_found"] == 0.75 and strict["false_not_found"] == 0.0


def test_the_answers_table_shows_not_found_and_the_answer_baseline():
    block = {
        "questions": 4,
        "answer_contains_gold": 0.5,
        "citation_precision": 0.6,
        "false_not_found": 0.25,
        "not_found": {"all": {"rate": 0.9, "questions": 10}, "null": {"rate": 0.8, "questions": 5}},
    }
    report = {
        "dataset": "tiny",
        "questions": 4,
        "skipped_questions": 5,
        "snapshot": {"version": "v1", "articles": 1, "chunks": 1, "questions": 0, "naive_chunks": 1, "build_seconds": 1.0},
        "seconds": 1.0,
        "methods": {
            "petrichor": {"doc": {"recall@1": 1.0}, "answer": {**block, "without_gate": {**block, "false_not_found": 0.0}}},
            "naive_hybrid": {"doc": {"recall@1": 0.5}, "answer": block},
        },
        "answer_baseline": {"name": "naive_top_sentence", **block, "not_found": {"all": {"rate": 0.0, "questions": 10}}},
        "unanswerable_questions": {"null": 5, "cross:other": 5},
    }
    console = Console(record=True, width=250)
    print_report(report, console)
    text = console.export_text()
    assert "naive_top_sentence" in text and "petrichor without gate" in text
    assert "answer false_not_found" in text and "answer not_found all" in text and "answer not_found null" in text
    assert "unanswerable questions: null 5, cross:other 5" in text


def test_the_sweep_holds_false_not_found_under_the_bar_on_every_set(tmp_path):
    """Pooled, both thresholds together lose 2 of 40 answerable questions (5 %) and find every unanswerable
    one; but both losses fall on one set (10 % of its answerable questions), so the sweep keeps one."""
    rows = [_signal_row("big", "answerable", 0.95, 0.8, holds=True) for _ in range(18)]
    rows += [_signal_row("big", "answerable", 0.95, 0.1), _signal_row("big", "answerable", 0.86, 0.8)]
    rows += [_signal_row("big", "null", 0.95, 0.1) for _ in range(10)]
    rows += [_signal_row("small", "answerable", 0.95, 0.8, holds=True) for _ in range(20)]
    rows += [_signal_row("small", "null", 0.87, 0.8) for _ in range(2)]
    path = tmp_path / "signals.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    best, _ = sweep.sweep(sweep.load([path]), max_false=0.05)
    assert best["per_set"]["big"]["false_not_found"] == 0.05 and best["per_set"]["small"]["false_not_found"] == 0.0
    assert best["per_set"]["big"]["not_found null"] == 1.0  # the threshold that finds more


def test_past_the_target_not_found_rate_the_sweep_keeps_answers(tmp_path):
    """Finding the tenth null query costs a held gold answer: at a target of 0.86 the sweep stops at nine."""
    rows = [_signal_row("a", "answerable", 0.95 + i / 1000, 0.8, holds=True) for i in range(19)]
    rows += [_signal_row("a", "answerable", 0.82, 0.8, holds=True)]
    rows += [_signal_row("a", "null", 0.80 - i / 1000, 0.8) for i in range(9)] + [_signal_row("a", "null", 0.83, 0.8)]
    path = tmp_path / "signals.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    kept, _ = sweep.sweep(sweep.load([path]), max_false=0.05, target=0.86)
    assert kept["not_found"] == 0.9 and kept["holds_gold"] == 1.0
    greedy, _ = sweep.sweep(sweep.load([path]), max_false=0.05, target=1.0)
    assert greedy["not_found"] == 1.0 and greedy["holds_gold"] == 0.95


def test_the_sweep_waives_the_margin_where_the_evidence_holds_the_question_s_information(tmp_path):
    """Answerable questions near the background but holding their words keep their answers once the margin
    is waived from their held share; unanswerable ones at the same margin lack their subject and stay found."""

    def row(kind, margin, weighted, holds=None):
        r = _signal_row("a", kind, 0.9, 0.6, holds=holds)
        r["qid"] += f"{margin}{weighted}"
        r["answerability"]["signals"] |= {"margin": margin, "script": "cjk", "weighted_coverage": weighted}
        return r

    rows = [row("answerable", 0.09 + i / 1000, 0.8, holds=True) for i in range(16)]
    rows += [row("answerable", 0.03, 0.75, holds=True) for _ in range(4)]
    rows += [row("null", 0.03, 0.3) for _ in range(9)] + [row("null", 0.1, 0.3)]
    path = tmp_path / "signals.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    best, _ = sweep.sweep(sweep.load([path]), max_false=0.05, target=0.86)
    assert best["margin_waived_at"] is not None and 0.3 < best["margin_waived_at"] <= 0.75
    assert best["false_not_found"] == 0.0 and best["not_found"] == 0.9
    no_waiver = sweep.score(sweep.load([path]), 0.81, 0.0, None, best["margin"])
    assert no_waiver["false_not_found"] == 0.2
