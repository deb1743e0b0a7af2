"""What every recall route is: one function `run(ctx, query) -> list[Hit]` and a declaration of what it
needs, so the pipeline, the config and the index loader read routes from the registry instead of naming them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from petrichor_serving.recall.access import Access
from petrichor_serving.recall.dense import Scans
from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.tables import VectorTable

if TYPE_CHECKING:
    from petrichor_serving.recall.index import RecallIndex


@dataclass(frozen=True)
class RouteContext:
    """What stays the same for every query of one search."""

    index: RecallIndex
    access: Access
    fingerprint: str | None
    """The query embedder's fingerprint: vector routes compare only with vectors of the same model."""
    parent_score: str = "max"
    """How window routes score a chunk from its windows (`parents.PARENT_SCORES`)."""


@dataclass(frozen=True)
class RouteQuery:
    """One of the search's queries (the question or a rewritten clause)."""

    text: str
    terms: Sequence[str]
    """`text` through the index's query tokenizer."""
    top_k: int
    """Hits the route returns (`RecallConfig.route_top_k`)."""
    vector: np.ndarray | None = None
    """The query embedding; None without an embedder (vector routes are then skipped)."""
    primary: bool = True
    """False for a rewritten sub-query, whose lists the fusion may weigh less."""
    scans: Scans = field(default_factory=dict, compare=False, repr=False)
    """The vector tables' exact products with `vector`, kept for the other vector routes of this query
    (`dense.DenseVectors.products`)."""


CHUNK_TEXT = 1
"""`Route.display_priority` of a route that finds chunks by their own text: its hit shows the chunk's title and
snippet in place of an alias's (0, the default)."""
MATCHED_WINDOW = 2
"""The display priority of a hit that carries a matched window, whichever route found it: above every route's."""


class Tier(Enum):
    PRIMARY = "primary"
    """Runs for every query; can be switched off by name (`RecallConfig.disabled_routes`)."""
    FALLBACK = "fallback"
    """Runs for a query only when the routes in `fallback_for` (listed before it in `ROUTES`) found nothing."""
    LEGACY = "legacy"
    """Runs, for every query, only when no primary route found anything in the whole search."""


@dataclass(frozen=True)
class Route:
    name: str
    run: Callable[[RouteContext, RouteQuery], list[Hit]]
    diagnostics_key: str
    """The search diagnostics list that records the keys this route found (routes may share one)."""
    weight: float = 1.0
    """Scales the route's contributions in the rank fusion."""
    tier: Tier = Tier.PRIMARY
    fallback_for: tuple[str, ...] = ()
    vectors: VectorTable | None = None
    """Set for vector routes: they run only with a query vector and this table loaded."""
    focused: bool = True
    """False: skipped when the search focuses on one article."""
    default_on: bool = True
    """False: runs only when `RecallConfig.enabled_routes` names it."""
    display_priority: int = 0
    """Whose title and snippet a chunk found by several routes shows: the hit of the route with the highest
    priority (a route that finds the chunk itself outranks one that finds it through an alias, such as a
    generated question). A hit that carries a matched window outranks every route (`fusion`)."""

    @property
    def switchable(self) -> bool:
        return self.tier is Tier.PRIMARY
