"""Chunks whose generated questions are nearest to the query embedding; a chunk counts once."""

from __future__ import annotations

from petrichor_core.contract.route_tables import QUESTION_VECTORS
from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery, VectorTable
from petrichor_serving.recall.routes.nearest import nearest

NAME = "question_vector"
TABLE = VectorTable(QUESTION_VECTORS, rows="questions")
"""Built only when the question routes search the snapshot's questions (`route_tables`): its absence is normal."""
QUESTION_ROUTE_WEIGHT = 0.5
"""Generated questions are aliases one step removed from the text: their routes count half in the fusion.
Measured (docs/evaluation.md): at full weight, the offline model's questions took fusion slots from chunks
that the text routes agreed on; at half weight they still add recall."""
FETCH = 30
"""Several questions of one chunk can crowd the nearest neighbours; fetch more, then keep one per chunk."""


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    index, access = ctx.index, ctx.access
    hits: list[Hit] = []
    seen: set[int] = set()
    found = nearest(index.vectors[TABLE.name], access, query.vector, ctx.fingerprint, FETCH, access.questions, index.questions.row_of, query.scans)
    for row, similarity in found:
        chunk_row = int(index.questions.chunk_rows[row])
        if chunk_row in seen:
            continue
        seen.add(chunk_row)
        hits.append(index.chunk_hit(chunk_row, NAME, similarity, question_row=row))
        if len(hits) >= query.top_k:
            break
    return hits


ROUTE = Route(NAME, run, diagnostics_key="questionVectorKeys", weight=QUESTION_ROUTE_WEIGHT, vectors=TABLE)
