"""Article-level balancing (reference §6.5): one long popular article must not fill every slot.

Fused hits are grouped by article; an article scores its best hits (the reference: the best three weighted
1, 0.35, 0.15; Petrichor: the best alone) plus a hair for multi-route agreement; the best few articles are kept
and their hits interleaved round-robin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from petrichor_serving.recall.hits import Hit

ARTICLE_TOP_K = 5
"""Articles whose hits go to the rerank: with the dense share in the rerank, five beat three on every dev set."""
PER_ARTICLE_TOP_K = 4
REFERENCE_RANK_WEIGHTS = (1.0, 0.35, 0.15)
"""The reference's article score: its best three hits' fused scores weighted by these, best first."""
RANK_WEIGHTS = (1.0,)
"""Petrichor's: the article's best hit alone. Adding its next hits favoured long articles with many middling
hits over the one with the best passage (measured on rhdh and multihop, docs/evaluation.md)."""
_ROUTE_BONUS = 1e-6


@dataclass(frozen=True)
class ArticleStage:
    hits: list[Hit]
    article_keys: list[str]
    """The kept groups, best first: `{kb}:{article_id}`, or a hit key for a hit without an article."""


def select_articles(
    hits: Sequence[Hit],
    article_top_k: int = ARTICLE_TOP_K,
    per_article_top_k: int = PER_ARTICLE_TOP_K,
    rank_weights: Sequence[float] = REFERENCE_RANK_WEIGHTS,
) -> ArticleStage:
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(hit.article_key, []).append(hit)

    def group_score(items: list[Hit]) -> float:
        best = sorted((h.score for h in items), reverse=True)[: len(rank_weights)]
        agreement = max(len(h.routes) for h in items) * _ROUTE_BONUS
        return sum(w * s for w, s in zip(rank_weights, best)) + agreement

    # dict order is first appearance, and sorted() is stable: ties go to the article seen first
    ranked = sorted(groups.items(), key=lambda kv: -group_score(kv[1]))[:article_top_k]
    balanced = [
        items[offset] for offset in range(per_article_top_k) for _, items in ranked if offset < len(items)
    ]
    return ArticleStage(hits=balanced, article_keys=[key for key, _ in ranked])
