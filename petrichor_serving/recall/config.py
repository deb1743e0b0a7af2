"""`RecallConfig`: every tuned number and switch of recall, in one place, each with why it has its value.

The defaults are the product's behaviour; serving never changes them. Evaluation ablations derive variants
with `dataclasses.replace(DEFAULT_CONFIG, ...)`. The stage modules (`fusion`, `balance`, `rerank`,
`diversity`) take these values as arguments and hold none of their own. Which routes can be switched and
how much each weighs come from the route registry (`routes.ROUTES`), not from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from petrichor_core.contract.route_tables import QUESTION_ROUTE_MODES, question_routes_run
from petrichor_serving.recall import routes
from petrichor_serving.recall.routes.parents import PARENT_SCORES

RANKERS = ("hand", "learned")
"""How a rerank pool is ordered (`RecallConfig.ranker`)."""


@dataclass(frozen=True)
class RecallConfig:
    # ------------------------------------------------------------------------------------- the list
    limit: int = 10
    """Results a search returns when its caller names no count (HTTP, MCP, CLI, evaluation): a page a reader
    scans. `fresh_tail`, `rerank_top_k` and `max_per_article` are sized for this length."""

    # ------------------------------------------------------------------------------ queries and routes
    rewrite: bool = False
    """True also searches the reference's rule-based clauses of a compound question. Off by
    default: the clauses are sentence fragments that each weigh as much as the question and cost recall on
    multi-document questions (docs/evaluation.md); a caller's own `sub_queries` are always searched."""
    coordinated: bool = True
    """Values of one kind joined by a conjunction ("2022年和2023年", "香港和澳门") are each searched in a
    sub-query without the others (`coordinated`); False searches the question alone."""
    spelling: bool = True
    """True adds, to each unknown Latin query word, the indexed word it misspells (`spelling.py`)."""
    disabled_routes: frozenset[str] = frozenset()
    """Switchable routes (`routes.switchable()`) that are not run at all."""
    enabled_routes: frozenset[str] = frozenset()
    """Routes that are off by default (`routes.default_off()`) run in this search."""
    question_routes: str = "model"
    """`model`: the question routes run only over a snapshot whose questions a configured model wrote;
    `always`: whoever wrote them (`route_tables.question_routes_run`, the rule the build embeds by)."""
    route_top_k: int = 10
    """Hits each route returns per query into the fusion: 30 lifted one dev set and lost others at rank 1
    (ablation `route_top_30`, docs/evaluation.md), and every route's cost grows with it."""
    parent_score: str = "max"
    """How the window routes score a chunk from its windows: its best window (`max`) or the sum of its
    best few (`sum`, which lost on the sets whose articles have several chunks: ablation `parent_sum`)."""

    # ------------------------------------------------------------------------------------------ fusion
    route_weights: tuple[tuple[str, float], ...] | None = None
    """(route, weight) pairs scaling a route's RRF contributions, unnamed routes weighing 1; None: each
    route's declared weight."""
    sub_query_weight: float = 1.0
    """Fusion weight of the lists a rewritten sub-query adds, beside the question's own lists at 1: a
    caller's sub-queries are meant to find their subjects' articles as the question finds its own."""
    fusion_top_k: int = 30
    """Fused hits kept for the stages after the fusion: three lists' worth, what balancing chooses articles
    from and the diversity stage backfills from."""

    # --------------------------------------------------------------------------------------- balancing
    article_top_k: int = 5
    """Articles whose hits go to the rerank (a focused search keeps one regardless): with the dense share in
    the rerank, five beat three on every dev set (ablations `articles_3`, `articles_10`)."""
    per_article_top_k: int = 4
    """Hits of each kept article interleaved into the rerank's pool, as the reference keeps them."""
    article_rank_weights: tuple[float, ...] = (1.0,)
    """How balancing scores an article from its best fused hits: the best alone. Adding its next hits (the
    reference's `balance.REFERENCE_RANK_WEIGHTS`) favoured long articles with many middling hits over the one
    with the best passage (rhdh, multihop; ablation `articles_by_top3`)."""
    sub_query_leads: bool = True
    """Each sub-query's first article keeps a place right after the first hit (`balance.sub_query_leads`)."""

    # ------------------------------------------------------------------------------------------ rerank
    rerank: bool = True
    """False keeps the article-balanced order instead of the local rerank."""
    rerank_top_k: int = 10
    """Hits of the balanced pool the local rerank orders: one list's worth (`limit`)."""
    rerank_idf: bool = True
    """False weighs every query token alike in the local rerank, as the reference does."""
    rerank_dense: float = 8.0
    """Rerank points for the pool's nearest hit by cosine (scaled to the pool's range), as much as two
    title-token matches: lexical fields alone let a question with a typo or a paraphrase lose to a passage
    that repeats its common words; 4, 6, 8, 10 and 16 were measured on every dev set. 0: lexical only."""
    rerank_sentence: float = 1.5
    """Rerank points per query token of the hit's best sentence (`rerank.best_sentence`): a passage that
    answers usually says so in one sentence that names most of the question; 1, 1.5, 2 and 3 were measured
    on every dev set. 0: the fields alone."""
    rerank_prior: float = 16.0
    """Rerank points for the pool's best fused score, the worst getting none, as much as four title-token
    matches: RRF scores of ten hits sit within a few percent of each other, so a smaller prior let the
    lexical fields reorder the list alone (9 of 214 first places lost on rgb_zh); 4 to 32 were measured."""
    ranker: str = "hand"
    """`hand`: the rerank's hand-tuned points above; `learned`: the shipped learned ranker
    (`recall/ranker.py`) orders each rerank pool by its feature rows, the hand points one of them (the hand
    rerank when the model cannot be loaded)."""
    prior_range: bool = True
    """False scales the fused prior to the best score's share (the earlier rule) instead of the pool's range."""

    # --------------------------------------------------------------------------- diversity, fresh tail
    diversity: bool = True
    """False skips the near-duplicate test and the per-article cap: the reranked list, backfilled, as is."""
    max_per_article: int = 3
    """How many results one article may fill in an unfocused search: a third of a `limit`-long list."""
    fresh_tail: int = 6
    """Last places of an unfocused list kept for the best hits of articles not yet listed: sized for a list
    of `limit` = 10, where the first four places come from the best articles and the rest show where else
    the answer may be (docs/evaluation.md). The agent searches with this same `limit`, so the evaluation
    measures the list it reads from."""
    tail_articles: int = 9
    """The fresh tail's new articles come in the local rerank's order of the best hit of each of this many
    articles (the first by fused score), then in fused order; 0: in fused order alone. 7 to 10 each lifted
    doc recall@5 on three dev sets; 9 is the one that costs no set a question elsewhere."""

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
        if self.ranker not in RANKERS:
            raise ValueError(f"ranker must be one of {RANKERS}")
        if self.parent_score not in PARENT_SCORES:
            raise ValueError(f"parent_score must be one of {PARENT_SCORES}")
        for name in ("limit", "route_top_k", "fusion_top_k", "article_top_k", "per_article_top_k", "rerank_top_k", "max_per_article"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")

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


DEFAULT_CONFIG = RecallConfig()
CONCEPT_CONFIG = RecallConfig(enabled_routes=routes.default_off())
"""A concept question's search: the wiki pages among the candidates, to read and follow to their sources."""
