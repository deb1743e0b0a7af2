"""Chunks ranked by BM25 over their generated questions; a chunk counts once, through its best question."""

from __future__ import annotations

from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery
from petrichor_serving.recall.routes.question_vector import QUESTION_ROUTE_WEIGHT

NAME = "question_bm25"


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    index = ctx.index
    chunk_rows = index.questions.chunk_rows
    ranked = index.bm25["question"].top(query.terms, query.top_k, ctx.access.questions, group=lambda r: int(chunk_rows[r]))
    return [index.chunk_hit(int(chunk_rows[r.row]), NAME, r.score, question_row=r.row) for r in ranked]


ROUTE = Route(NAME, run, diagnostics_key="questionBm25Keys", weight=QUESTION_ROUTE_WEIGHT)
