"""Chunks whose child windows are nearest to the query embedding; a chunk counts once (`parents`)."""

from __future__ import annotations

from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery, VectorTable
from petrichor_serving.recall.routes.nearest import nearest
from petrichor_serving.recall.routes.parents import FETCH_PER_HIT, parent_hits

NAME = "window_vector"
TABLE = VectorTable("window_vectors", rows="windows")


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    index, access = ctx.index, ctx.access
    windows, allowed = index.windows, access.windows
    found = nearest(
        index.vectors[TABLE.name], access, query.vector, ctx.fingerprint, query.top_k * FETCH_PER_HIT, allowed, windows.row_of, query.scans
    )
    return parent_hits(ctx, found, NAME, query.top_k)


ROUTE = Route(NAME, run, diagnostics_key="windowVectorKeys", vectors=TABLE)
