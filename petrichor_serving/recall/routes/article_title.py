"""Backs up a query both BM25 routes missed: readable articles whose title contains a query token."""

from __future__ import annotations

import numpy as np

from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes import chunk_bm25, question_bm25
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery, Tier

NAME = "article_title"
SCORE = 0.4


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    """Case-insensitive containment, in table order."""
    if not query.terms:
        return []
    hits: list[Hit] = []
    titles = ctx.index.articles.titles
    for row in np.flatnonzero(ctx.access.articles).tolist():
        title = titles[row].lower()
        if any(t in title for t in query.terms):
            hits.append(ctx.index.article_hit(row, NAME, SCORE))
            if len(hits) >= query.top_k:
                break
    return hits


ROUTE = Route(
    NAME,
    run,
    diagnostics_key="articleTitleKeys",
    tier=Tier.FALLBACK,
    fallback_for=(chunk_bm25.NAME, question_bm25.NAME),
)
