"""Switches that turn recall stages off, to measure what each one contributes (evaluation ablations).

The defaults are the product's behaviour; serving never changes them. Which routes can be switched and how
much each weighs come from the route registry (`routes.ROUTES`).
"""

from __future__ import annotations

from dataclasses import dataclass

from petrichor_pipeline.contract.route_tables import QUESTION_ROUTE_MODES, question_routes_run
from petrichor_serving.recall import routes
from petrichor_serving.recall.balance import ARTICLE_TOP_K, RANK_WEIGHTS
from petrichor_serving.recall.diversity import FRESH_TAIL, MAX_PER_ARTICLE, TAIL_ARTICLES
from petrichor_serving.recall.rerank import DENSE_WEIGHT, FUSED_PRIOR, SENTENCE_WEIGHT
from petrichor_serving.recall.routes.base import ROUTE_TOP_K
from petrichor_serving.recall.routes.parents import PARENT_SCORES


@dataclass(frozen=True)
class SearchOptions:
    disabled_routes: frozenset[str] = frozenset()
    """Switchable routes (`routes.switchable()`) that are not run at all."""
    enabled_routes: frozenset[str] = frozenset()
    """Routes that are off by default (`routes.default_off()`) run in this search."""
    rerank: bool = True
    """False keeps the article-balanced order instead of the local rerank."""
    route_weights: tuple[tuple[str, float], ...] | None = None
    """(route, weight) pairs scaling a route's RRF contributions, unnamed routes weighing 1; None: each
    route's declared weight."""
    rerank_idf: bool = True
    """False weighs every query token alike in the local rerank, as the reference does."""
    article_top_k: int = ARTICLE_TOP_K
    """How many articles the balancing stage keeps (a focused search keeps one regardless)."""
    article_rank_weights: tuple[float, ...] = RANK_WEIGHTS
    """How the balancing stage scores an article from its best fused hits."""
    sub_query_weight: float = 1.0
    """Fusion weight of the lists a rewritten sub-query adds, beside the question's own lists at 1."""
    question_routes: str = "model"
    """`model`: the question routes run only over a snapshot whose questions a configured model wrote;
    `always`: whoever wrote them (`route_tables.question_routes_run`, the rule the build embeds by)."""
    route_top_k: int = ROUTE_TOP_K
    """Hits each route returns per query into the fusion."""
    rewrite: bool = False
    """True also searches the reference's rule-based clauses of a compound question (reference §6.2). Off by
    default: the clauses are sentence fragments that each weigh as much as the question and cost recall on
    multi-document questions (docs/evaluation.md); a caller's own `sub_queries` are always searched."""
    coordination: bool = True
    """Also search a Chinese question asked of several subjects (A和B的X) once per subject
    (`rewrite.coordination_queries`): it finds the second subject's article on multi-document questions."""
    sub_query_leads: bool = True
    """Each sub-query's first article keeps a place right after the first hit (`balance.sub_query_leads`)."""
    diversity: bool = True
    """False skips the near-duplicate test and the per-article cap: the reranked list, backfilled, as is."""
    rerank_dense: float = DENSE_WEIGHT
    """Rerank points for the hit with the best cosine in the pool (scaled to the pool's range); 0: lexical only."""
    rerank_sentence: float = SENTENCE_WEIGHT
    """Rerank points per query token of the hit's best sentence (`rerank.best_sentence`); 0: the fields alone."""
    rerank_prior: float = FUSED_PRIOR
    """Rerank points for the pool's best fused score."""
    prior_range: bool = True
    """False scales the fused prior to the best score's share (the earlier rule) instead of the pool's range."""
    fresh_tail: int = FRESH_TAIL
    """Last places of an unfocused result list kept for articles not yet listed (their best fused hit)."""
    tail_articles: int = TAIL_ARTICLES
    """The fresh tail's new articles come in the local rerank's order of the best hit of each of this many
    articles (the first by fused score), then in fused order; 0: in fused order alone."""
    max_per_article: int = MAX_PER_ARTICLE
    """How many results one article may fill in an unfocused search."""
    spelling: bool = True
    """True adds, to each unknown Latin query word, the indexed word it misspells (`spelling.py`)."""
    parent_score: str = "max"
    """How the window routes score a chunk from its windows: its best window (`max`) or the sum of its
    best few (`sum`)."""

    def __post_init__(self) -> None:
        names = routes.switchable()
        unknown = set(self.disabled_routes) - set(names)
        if unknown:
            raise ValueError(f"unknown routes {sorted(unknown)}; expected some of {list(names)}")
        unknown = set(self.enabled_routes) - routes.default_off()
        if unknown:
            raise ValueError(f"routes {sorted(unknown)} are not off by default; expected some of {sorted(routes.default_off())}")
        if self.question_routes not in QUESTION_ROUTE_MODES:
            raise ValueError(f"question_routes must be one of {QUESTION_ROUTE_MODES}")
        if self.parent_score not in PARENT_SCORES:
            raise ValueError(f"parent_score must be one of {PARENT_SCORES}")
        if self.article_top_k < 1:
            raise ValueError("article_top_k must be at least 1")

    def runs(self, route: str, model_questions: bool = True) -> bool:
        """Whether `route` takes part; `model_questions` says whether the snapshot's questions came from a
        configured model."""
        if route in routes.QUESTION_ROUTES and not question_routes_run(self.question_routes, model_questions):
            return False
        if route in routes.default_off() and route not in self.enabled_routes:
            return False
        return route not in self.disabled_routes

    def weights(self) -> dict[str, float]:
        """The fusion weight of each route that does not weigh 1."""
        if self.route_weights is None:
            return {name: w for name, w in routes.default_weights().items() if w != 1.0}
        return dict(self.route_weights)


DEFAULT_OPTIONS = SearchOptions()
CONCEPT_OPTIONS = SearchOptions(enabled_routes=routes.default_off())
"""A concept question's search: the wiki pages among the candidates, to read and follow to their sources."""
