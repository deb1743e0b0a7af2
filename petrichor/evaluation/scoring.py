"""Score rankings against a question's gold evidence and summarise a method over the whole set.

Document figures count the first gold document (any one of them); questions that need several documents
(`gold_match: all`, `gold_doc_groups`) also get all-gold figures of their own: the rank at which every
needed document, and every gold passage, has been retrieved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from petrichor.evaluation.dataset import EvalQuestion
from petrichor.evaluation.metrics import (
    GoldPassage,
    cover_rank,
    dedupe,
    doc_hit_rank,
    first_hit_rank,
    group_hit_rank,
    mean,
    percentile,
    recall_at,
    reciprocal_rank,
    section_hit,
    shingles,
)
from petrichor.evaluation.retrieval import Ranking, Retrieved

DOC_KS = (1, 5, 10)
CHUNK_KS = (5, 10)
CURVE_KS = tuple(range(1, 11))


@dataclass(frozen=True)
class Outcome:
    """One question under one method: 1-based ranks of the first hit (None: no hit in the list)."""

    qid: str
    doc_rank: int | None
    passage_rank: int | None
    section_rank: int | None
    latency_ms: float
    recall_ms: float | None
    all_doc_rank: int | None = None
    """Rank at which one document of every needed group is in the list (questions needing several)."""
    all_passage_rank: int | None = None
    """Rank at which every gold passage has been found (questions needing several documents)."""


class Scorer:
    """Holds each question's prepared gold passages and a shingle cache shared by every method."""

    def __init__(self, questions: Sequence[EvalQuestion]):
        self.questions = list(questions)
        self.passages = {q.qid: tuple(GoldPassage.of(p, q.lang) for p in q.gold_passages) for q in self.questions}
        self._grams: dict[str, set[tuple[str, ...]]] = {}

    def _chunk_grams(self, text: str) -> set[tuple[str, ...]]:
        grams = self._grams.get(text)
        if grams is None:
            grams = self._grams[text] = shingles(text)
        return grams

    def passages_found(self, question: EvalQuestion, item: Retrieved) -> set[int]:
        """Indices of the question's gold passages that the item contains."""
        if not item.is_chunk:
            return set()
        grams = self._chunk_grams(item.text) if question.lang != "zh" else None
        return {n for n, p in enumerate(self.passages[question.qid]) if p.found_in(item.text, grams)}

    def passage_hit(self, question: EvalQuestion, item: Retrieved) -> bool:
        return bool(self.passages_found(question, item))

    def outcome(self, question: EvalQuestion, ranking: Ranking) -> Outcome:
        docs = dedupe(i.doc_id for i in ranking.items)
        sections = [(s.doc_id, s.heading_path) for s in question.gold_sections]
        found = [self.passages_found(question, i) for i in ranking.items]
        several = bool(question.needed_docs)
        return Outcome(
            qid=question.qid,
            doc_rank=doc_hit_rank(docs, question.gold_doc_ids),
            passage_rank=first_hit_rank([bool(f) for f in found]),
            section_rank=first_hit_rank([i.is_chunk and section_hit(i.doc_id, i.heading_path, sections) for i in ranking.items]),
            latency_ms=ranking.latency_ms,
            recall_ms=ranking.recall_ms,
            all_doc_rank=group_hit_rank(docs, question.needed_docs) if several else None,
            all_passage_rank=cover_rank(found, len(question.gold_passages)) if several else None,
        )

    def reachable(self, chunks: Sequence[Retrieved]) -> float | None:
        """Share of questions with gold passages for which *some* chunk of the method could hit:
        the ceiling of chunk-level recall, set by chunk sizes and coverage rather than by ranking."""
        asked = [q for q in self.questions if q.gold_passages]
        if not asked:
            return None
        by_doc: dict[str | None, list[Retrieved]] = {}
        for c in chunks:
            by_doc.setdefault(c.doc_id, []).append(c)
        hits = 0
        for q in asked:
            pool = [c for d in q.gold_doc_ids for c in by_doc.get(d, ())] or list(chunks)
            hits += any(self.passage_hit(q, c) for c in pool)
        return round(hits / len(asked), 4)


LEVELS: dict[str, tuple[str, Callable[[EvalQuestion], bool]]] = {
    "doc": ("doc_rank", lambda q: bool(q.gold_doc_ids)),
    "passage": ("passage_rank", lambda q: bool(q.gold_passages)),
    "section": ("section_rank", lambda q: bool(q.gold_sections)),
    "all_doc": ("all_doc_rank", lambda q: bool(q.needed_docs)),
    "all_passage": ("all_passage_rank", lambda q: bool(q.needed_docs) and bool(q.gold_passages)),
}


def level_ranks(questions: Sequence[EvalQuestion], outcomes: Sequence[Outcome], level: str) -> list[int | None]:
    """The ranks at `level` (a key of `LEVELS`) of the questions that have that kind of gold."""
    by_id = {q.qid: q for q in questions}
    attribute, applies = LEVELS[level]
    return [getattr(o, attribute) for o in outcomes if o.qid in by_id and applies(by_id[o.qid])]


def summarise_subsets(questions: Sequence[EvalQuestion], outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The same figures per `subset` of the set (RGB's `zh_refine`, `zh_int`); empty for a set without."""
    names = dict.fromkeys(q.subset for q in questions if q.subset)
    return {
        name: {
            "questions": sum(q.subset == name for q in questions),
            **summarise([q for q in questions if q.subset == name], outcomes, with_latency=False),
        }
        for name in names
    }


def _recalls(ranks: Sequence[int | None], ks: Sequence[int]) -> dict[str, float | None]:
    return {f"recall@{k}": mean([recall_at(r, k) for r in ranks]) for k in ks}


def summarise(questions: Sequence[EvalQuestion], outcomes: Sequence[Outcome], with_latency: bool = True) -> dict[str, Any]:
    """`{"doc": {recall@1/5/10, mrr@10}, "all_gold"?: {recall@5/10, mrr@10, passage_recall@5/10, questions},
    "chunk": {recall@5/10}, "section"?: {...}, "latency_ms"?: {p50, p95}, "recall_ms"?: {p50, p95}}`; each
    figure is averaged over the questions (of `questions`) that have that kind of gold evidence.
    `with_latency=False` leaves out end-to-end latency (measured on a warm query-vector cache it would only
    repeat `recall_ms`)."""
    wanted = {q.qid for q in questions}
    outcomes = [o for o in outcomes if o.qid in wanted]
    doc = level_ranks(questions, outcomes, "doc")
    section = level_ranks(questions, outcomes, "section")
    out: dict[str, Any] = {
        "doc": {**_recalls(doc, DOC_KS), "mrr@10": mean([reciprocal_rank(r, 10) for r in doc])},
        "chunk": _recalls(level_ranks(questions, outcomes, "passage"), CHUNK_KS),
    }
    several = level_ranks(questions, outcomes, "all_doc")
    if several:
        passages = level_ranks(questions, outcomes, "all_passage")
        out["all_gold"] = {
            **_recalls(several, CHUNK_KS),
            "mrr@10": mean([reciprocal_rank(r, 10) for r in several]),
            **{f"passage_{k}": v for k, v in _recalls(passages, CHUNK_KS).items()},
            "questions": len(several),
        }
    if section:
        out["section"] = _recalls(section, CHUNK_KS)
    if with_latency:
        latencies = [o.latency_ms for o in outcomes]
        out["latency_ms"] = {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)}
    recall = [o.recall_ms for o in outcomes if o.recall_ms is not None]
    if recall:
        out["recall_ms"] = {"p50": percentile(recall, 50), "p95": percentile(recall, 95)}
    return out


def recall_curve(ranks: Sequence[int | None]) -> list[float | None]:
    """Recall@1..10 of a list of first-hit ranks (for the plots)."""
    return [mean([recall_at(r, k) for r in ranks]) for k in CURVE_KS]
