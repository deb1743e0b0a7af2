"""The legacy PageIndex tree route: nodes ranked by BM25, consulted only when no primary route found anything."""

from __future__ import annotations

from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery, Tier

NAME = "tree_bm25"


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    ranked = ctx.index.bm25["tree"].top(query.terms, query.top_k, ctx.access.tree)
    return [ctx.index.tree_hit(r.row, NAME, r.score) for r in ranked]


ROUTE = Route(NAME, run, diagnostics_key="treeKeys", tier=Tier.LEGACY)
