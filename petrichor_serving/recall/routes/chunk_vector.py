"""Chunks nearest to the query embedding."""

from __future__ import annotations

from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes.base import CHUNK_TEXT, Route, RouteContext, RouteQuery, VectorTable
from petrichor_serving.recall.routes.nearest import nearest

NAME = "chunk_vector"
TABLE = VectorTable("chunk_vectors", rows="chunks")


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    index, access = ctx.index, ctx.access
    found = nearest(index.vectors[TABLE.name], access, query.vector, ctx.fingerprint, query.top_k, access.chunks, index.chunks.row_of, query.scans)
    return [index.chunk_hit(row, NAME, similarity) for row, similarity in found]


ROUTE = Route(NAME, run, diagnostics_key="chunkVectorKeys", vectors=TABLE, display_priority=CHUNK_TEXT)
