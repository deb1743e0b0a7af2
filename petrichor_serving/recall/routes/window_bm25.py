"""Chunks ranked by BM25 over their child windows' index texts; a chunk counts once (`parents`)."""

from __future__ import annotations

from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery
from petrichor_serving.recall.routes.parents import FETCH_PER_HIT, parent_hits

NAME = "window_bm25"


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    ranked = ctx.index.bm25["window"].top(query.terms, query.top_k * FETCH_PER_HIT, ctx.access.windows)
    return parent_hits(ctx, ((r.row, r.score) for r in ranked), NAME, query.top_k)


ROUTE = Route(NAME, run, diagnostics_key="windowBm25Keys")
