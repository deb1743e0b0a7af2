"""Chunks ranked by BM25 over their index text."""

from __future__ import annotations

from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes.base import CHUNK_TEXT, Route, RouteContext, RouteQuery

NAME = "chunk_bm25"


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    ranked = ctx.index.bm25["chunk"].top(query.terms, query.top_k, ctx.access.chunks)
    return [ctx.index.chunk_hit(r.row, NAME, r.score) for r in ranked]


ROUTE = Route(NAME, run, diagnostics_key="chunkBm25Keys", display_priority=CHUNK_TEXT)
