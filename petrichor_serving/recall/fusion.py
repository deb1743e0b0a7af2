"""Reciprocal Rank Fusion of the per-(query, route) ranked lists.

Route scores (cosine, BM25, field counts) are not comparable, ranks are: each list adds
1 / (60 + rank) with 1-based ranks. Hits of one chunk merge, whichever route found them; when a chunk was
first found only through a generated question and the original chunk then turns up, the chunk's own title
and snippet replace the question's; a hit through a child window replaces both (its snippet shows the
matched window and it carries the window's offsets), while every rank contribution is kept. The merged hit
also keeps each route's own best score (`route_scores`): the rerank reads the cosines from there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from petrichor_serving.recall.config import DEFAULT_CONFIG
from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes import display_priorities
from petrichor_serving.recall.routes.base import MATCHED_WINDOW

RRF_K = 60
"""The reference's (and the RRF paper's) constant: it damps the lead of a list's first ranks."""


def _display_rank(hit: Hit, priorities: Mapping[str, int]) -> int:
    """Whose title and snippet a merged chunk shows: a matched window's, else the hit of the route with the
    highest declared `display_priority` (the chunk's own text over an alias such as a generated question)."""
    if hit.window is not None:
        return MATCHED_WINDOW
    return max((priorities.get(r, 0) for r in hit.routes), default=0)


def fuse(
    groups: Sequence[Sequence[Hit]],
    limit: int = DEFAULT_CONFIG.fusion_top_k,
    weights: Mapping[str, float] | None = None,
    group_weights: Sequence[float] | None = None,
) -> list[Hit]:
    """Merge by `Hit.key`; the result's `score` is the RRF sum, `routes` the union in first-seen order.
    Sorted by score, ties to the hit more routes agree on, then to first appearance. `weights` scale a
    route's contributions (by the route that produced the list; 1 when absent); `group_weights`, when given,
    is each list's own weight instead."""
    merged: dict[str, Hit] = {}
    priorities = display_priorities()
    for n, group in enumerate(groups):
        if group_weights is not None:
            weight = group_weights[n]
        else:
            weight = weights.get(group[0].routes[0], 1.0) if weights and group and group[0].routes else 1.0
        for rank, hit in enumerate(group):
            entry = merged.get(hit.key)
            if entry is None:
                entry = hit.copy()
                entry.routes, entry.score, entry.route_scores = [], 0.0, {}
                merged[hit.key] = entry
            elif hit.chunk_id and _display_rank(hit, priorities) > _display_rank(entry, priorities):
                routes, score, route_scores = entry.routes, entry.score, entry.route_scores
                entry = hit.copy()
                entry.routes, entry.score, entry.route_scores = routes, score, route_scores
                merged[hit.key] = entry
            entry.score += weight / (RRF_K + rank + 1)
            if hit.routes:
                route = hit.routes[0]
                entry.route_scores[route] = max(entry.route_scores.get(route, hit.score), hit.score)
            entry.routes.extend(r for r in hit.routes if r not in entry.routes)
    out = sorted(merged.values(), key=lambda h: (-h.score, -len(h.routes)))
    return out[:limit]
