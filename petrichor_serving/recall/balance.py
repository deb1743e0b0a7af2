"""Article-level balancing: one long popular article must not fill every slot.

Fused hits are grouped by article; an article scores its best hits (the reference: the best three weighted
1, 0.35, 0.15; Petrichor: the best alone) plus a hair for multi-route agreement; the best few articles are kept
and their hits interleaved round-robin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from petrichor_serving.recall.config import DEFAULT_CONFIG
from petrichor_serving.recall.fusion import fuse
from petrichor_serving.recall.hits import Hit

REFERENCE_RANK_WEIGHTS = (1.0, 0.35, 0.15)
"""The reference's article score: its best three hits' fused scores weighted by these, best first
(Petrichor's: `RecallConfig.article_rank_weights`)."""
_ROUTE_BONUS = 1e-6


@dataclass(frozen=True)
class ArticleStage:
    hits: list[Hit]
    article_keys: list[str]
    """The kept groups, best first: `{kb}:{article_id}`, or a hit key for a hit without an article."""


def select_articles(
    hits: Sequence[Hit],
    article_top_k: int = DEFAULT_CONFIG.article_top_k,
    per_article_top_k: int = DEFAULT_CONFIG.per_article_top_k,
    rank_weights: Sequence[float] = DEFAULT_CONFIG.article_rank_weights,
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
    balanced = [items[offset] for offset in range(per_article_top_k) for _, items in ranked if offset < len(items)]
    return ArticleStage(hits=balanced, article_keys=[key for key, _ in ranked])


def sub_query_leads(fused: Sequence[Hit], sub_query_lists: Sequence[Sequence[Sequence[Hit]]]) -> list[Hit]:
    """Per sub-query (its own route lists), the article those lists rank first, as that article's best fused
    hit: one per article, in sub-query order.

    A question asked of several subjects needs one article per subject, but the question as a whole ranks
    the articles that name them all (or the first subject's) above the second subject's own: each
    sub-query's first article is what it was searched to find, and article balancing
    keeps it."""
    leads: list[Hit] = []
    seen: set[str] = set()
    for lists in sub_query_lists:
        best = fuse(lists, 1)
        if not best or best[0].article_key in seen:
            continue
        key = best[0].article_key
        seen.add(key)
        leads.append(next((h for h in fused if h.article_key == key), best[0]))
    return leads


def keep_leads(stage: ArticleStage, leads: Sequence[Hit]) -> ArticleStage:
    """The stage with each lead's article kept: a lead balancing left out joins after the first hit of every
    kept article, so it reaches the rerank."""
    add = [h for h in leads if h.article_key not in stage.article_keys]
    if not add:
        return stage
    cut = len(stage.article_keys)
    return ArticleStage(hits=[*stage.hits[:cut], *add, *stage.hits[cut:]], article_keys=[*stage.article_keys, *(h.article_key for h in add)])


def leads_after_first(ranked: Sequence[Hit], leads: Sequence[Hit]) -> list[Hit]:
    """The first hit, then each lead article's best-ranked hit (the lead itself when none was ranked), then the
    rest in order: the rerank scores against the whole question, which is what ranked the subjects' own
    articles low."""
    if not ranked or not leads:
        return list(ranked)
    head = [ranked[0]]
    for lead in leads:
        if any(h.article_key == lead.article_key for h in head):
            continue
        head.append(next((h for h in ranked if h.article_key == lead.article_key), lead))
    keys = {h.key for h in head}
    return [*head, *(h for h in ranked if h.key not in keys)]
