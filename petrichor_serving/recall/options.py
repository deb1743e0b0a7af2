"""Switches that turn recall stages off, to measure what each one contributes (evaluation ablations).

The defaults are the product's behaviour; serving never changes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from petrichor_serving.recall import routes
from petrichor_serving.recall.balance import ARTICLE_TOP_K
from petrichor_serving.recall.fusion import QUESTION_ROUTE_WEIGHT


@dataclass(frozen=True)
class SearchOptions:
    disabled_routes: frozenset[str] = frozenset()
    """Modern routes (`routes.MODERN_ROUTES`) that are not run at all."""
    rerank: bool = True
    """False keeps the article-balanced order instead of the local rerank."""
    route_weights: tuple[tuple[str, float], ...] = (
        (routes.QUESTION_VECTOR, QUESTION_ROUTE_WEIGHT),
        (routes.QUESTION_BM25, QUESTION_ROUTE_WEIGHT),
    )
    """(route, weight) pairs scaling a route's RRF contributions; unnamed routes weigh 1."""
    rerank_idf: bool = True
    """False weighs every query token alike in the local rerank, as the reference does."""
    article_top_k: int = ARTICLE_TOP_K
    """How many articles the balancing stage keeps (a focused search keeps one regardless)."""

    def __post_init__(self) -> None:
        unknown = set(self.disabled_routes) - set(routes.MODERN_ROUTES)
        if unknown:
            raise ValueError(f"unknown routes {sorted(unknown)}; expected some of {list(routes.MODERN_ROUTES)}")
        if self.article_top_k < 1:
            raise ValueError("article_top_k must be at least 1")

    def runs(self, route: str) -> bool:
        return route not in self.disabled_routes


DEFAULT_OPTIONS = SearchOptions()
