"""Chunks nearest to the query embedding (cosine over the chunk vectors)."""

from __future__ import annotations

from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery, VectorTable
from petrichor_serving.recall.routes.nearest import nearest

NAME = "chunk_vector"
TABLE = VectorTable("chunk_vectors", rows="chunks")


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    index, access = ctx.index, ctx.access
    row_of, allowed = index.chunks.row_of, access.chunks
    hits = []
    table = index.vectors[TABLE.name]
    for key, similarity in nearest(table, access, query.vector, ctx.fingerprint, query.top_k, allowed):
        row = row_of.get(key)
        if row is not None and allowed[row]:
            hits.append(index.chunk_hit(row, NAME, similarity))
    return hits


ROUTE = Route(NAME, run, diagnostics_key="chunkVectorKeys", vectors=TABLE)
