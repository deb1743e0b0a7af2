"""Readable entity/concept pages scored field by field (reference §6.3); not run in a focused search."""

from __future__ import annotations

from collections.abc import Sequence

from petrichor_serving.recall.hits import Hit, normalize_knowledge_text
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery

NAME = "wiki"
LEXICAL_POOL = 400
"""Wiki pages field-scored per query: the best by BM25, as the reference caps its candidate query."""


def score_knowledge_fields(
    title: str, summary: str, content: str, extra: str, query_norm: str, tokens: Sequence[str]
) -> float:
    """Whole normalised query in title / summary / content / extra: +8 / +4 / +2 / +2; each normalised
    token: +4 / +2 / +1 / +1. All arguments are already normalised."""
    score = 0.0
    if query_norm:
        score += 8 * (query_norm in title) + 4 * (query_norm in summary)
        score += 2 * (query_norm in content) + 2 * (query_norm in extra)
    for token in tokens:
        score += 4 * (token in title) + 2 * (token in summary) + (token in content) + (token in extra)
    return score


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    """The pool is the `LEXICAL_POOL` best pages by BM25, then ranked by the field score."""
    index = ctx.index
    w = index.wiki
    query_norm = normalize_knowledge_text(query.text)
    tokens = [t for t in map(normalize_knowledge_text, query.terms) if t]
    pool = sorted(r.row for r in index.bm25["wiki"].top(query.terms, LEXICAL_POOL, ctx.access.wiki))
    scored: list[tuple[float, int]] = []
    for row in pool:
        score = score_knowledge_fields(
            w.norm_title[row], w.norm_summary[row], w.norm_content[row], w.norm_extra[row], query_norm, tokens
        )
        if score > 0:
            scored.append((score, row))
    scored.sort(key=lambda item: -item[0])  # stable: ties keep table order
    return [index.wiki_hit(row, NAME, score) for score, row in scored[: query.top_k]]


ROUTE = Route(NAME, run, diagnostics_key="wikiKeys", focused=False)
