"""The recall routes, registered by name.

A route is one module here defining `ROUTE` (a `base.Route`: its `run(ctx, query)`, fusion weight, tier and
the vector table it needs) plus one line in `ROUTES`. The pipeline, `RecallConfig` and the index loader
read this registry, never a route by name. The order of `ROUTES` is the order routes run in for each query,
which is also the fusion's tie-break order.
"""

from __future__ import annotations

from petrichor_serving.recall.routes import (
    article_title,
    chunk_bm25,
    chunk_vector,
    question_bm25,
    question_vector,
    tree_bm25,
    wiki,
    window_bm25,
    window_vector,
)
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery, Tier, VectorTable

ROUTES: tuple[Route, ...] = (
    window_vector.ROUTE,
    chunk_vector.ROUTE,
    question_vector.ROUTE,
    window_bm25.ROUTE,
    chunk_bm25.ROUTE,
    question_bm25.ROUTE,
    article_title.ROUTE,
    wiki.ROUTE,
    tree_bm25.ROUTE,
)

# Names of the bundled switchable routes, for callers that turn them off (evaluation ablations).
CHUNK_VECTOR = chunk_vector.NAME
QUESTION_VECTOR = question_vector.NAME
CHUNK_BM25 = chunk_bm25.NAME
QUESTION_BM25 = question_bm25.NAME
WIKI = wiki.NAME
WINDOW_VECTOR = window_vector.NAME
WINDOW_BM25 = window_bm25.NAME
QUESTION_ROUTES = frozenset({QUESTION_VECTOR, QUESTION_BM25})


def registered() -> tuple[Route, ...]:
    """Every route in run order (read at call time, so a route added to `ROUTES` is seen everywhere)."""
    return ROUTES


def switchable() -> tuple[str, ...]:
    """Names of the routes `RecallConfig.disabled_routes` may name, in run order."""
    return tuple(r.name for r in ROUTES if r.switchable)


def default_off() -> frozenset[str]:
    """Names of the routes a search runs only when asked to (`RecallConfig.enabled_routes`)."""
    return frozenset(r.name for r in ROUTES if not r.default_on)


def default_weights() -> dict[str, float]:
    """Each route's declared fusion weight."""
    return {r.name: r.weight for r in ROUTES}


def display_priorities() -> dict[str, int]:
    """Each route's declared display priority (`Route.display_priority`): whose title and snippet a merged hit shows."""
    return {r.name: r.display_priority for r in ROUTES}


def vector_tables() -> dict[str, VectorTable]:
    """The vector tables some route searches, by manifest name: what `RecallIndex.build` is given to load."""
    return {r.vectors.name: r.vectors for r in ROUTES if r.vectors is not None}


__all__ = [
    "CHUNK_BM25",
    "CHUNK_VECTOR",
    "QUESTION_BM25",
    "QUESTION_ROUTES",
    "QUESTION_VECTOR",
    "ROUTES",
    "WIKI",
    "Route",
    "RouteContext",
    "RouteQuery",
    "Tier",
    "VectorTable",
    "WINDOW_BM25",
    "WINDOW_VECTOR",
    "default_off",
    "default_weights",
    "display_priorities",
    "registered",
    "switchable",
    "vector_tables",
]
