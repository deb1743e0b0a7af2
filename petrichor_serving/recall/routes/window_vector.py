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
    row_of, allowed = index.windows.row_of, access.windows
    found = nearest(index.vectors[TABLE.name], access, query.vector, ctx.fingerprint, query.top_k * FETCH_PER_HIT, allowed)
    ranked = ((row, score) for key, score in found if (row := row_of.get(key)) is not None and allowed[row])
    return parent_hits(ctx, ranked, NAME, query.top_k)


ROUTE = Route(NAME, run, diagnostics_key="windowVectorKeys", vectors=TABLE)
