"""Hybrid search, `STAGES` in order: plan (rewrite, access, routes) → recall (registered routes per query)
→ RRF → article balance → local rerank (lexical fields plus a dense share) → the fresh tail's order →
diversity → fresh tail (new articles, in the rerank's order of the next best).

Every stage is a plain function over one `SearchState`, its numbers read from `RecallConfig`; this module
only wires them, times them and records what each produced, so a poor answer can be traced to the route or
stage that lost the evidence. A failing route is recorded in `diagnostics["degraded"]` and the others carry on.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

import numpy as np

from petrichor_core.models.protocols import Embedder
from petrichor_serving.recall import routes
from petrichor_serving.recall.access import Scope
from petrichor_serving.recall.balance import ArticleStage, keep_leads, leads_after_first, select_articles, sub_query_leads
from petrichor_serving.recall.config import DEFAULT_CONFIG, RecallConfig
from petrichor_serving.recall.diversity import DiverseSelection, fresh_tail, select_diverse, tail_candidates
from petrichor_serving.recall.features import PoolRows, pool_features
from petrichor_serving.recall.fusion import fuse
from petrichor_serving.recall.hits import Hit, Window, normalize_knowledge_text
from petrichor_serving.recall.index import RecallIndex
from petrichor_serving.recall.query import Query
from petrichor_serving.recall.query_vectors import QUERY_VECTORS, QueryVectorCache
from petrichor_serving.recall.ranker import LinearRanker
from petrichor_serving.recall.ranker import load as load_ranker
from petrichor_serving.recall.rerank import STRATEGY, idf_weights, rerank
from petrichor_serving.recall.rewrite import build_queries
from petrichor_serving.recall.routes import Route, RouteContext, RouteQuery, Tier
from petrichor_serving.recall.spelling import corrected


@dataclass(frozen=True)
class Candidate:
    """A search result: where to read (exactly one of chunk_id / page_key / node_key, or only article_id
    for a title match) and a short snippet, never the full text."""

    article_id: str | None
    kb_id: str
    title: str
    heading_path: tuple[str, ...]
    snippet: str
    routes: list[str]
    score: float
    rerank_score: float | None = None
    chunk_id: str | None = None
    page_key: str | None = None
    node_key: str | None = None
    window: Window | None = None
    """For a chunk matched through a child window: that window, whose text the snippet shows."""

    @classmethod
    def from_hit(cls, hit: Hit) -> Candidate:
        return cls(
            article_id=hit.article_id,
            kb_id=hit.kb_id,
            title=hit.title,
            heading_path=tuple(hit.heading_path),
            snippet=hit.snippet,
            routes=list(hit.routes),
            score=round(hit.score, 4),
            rerank_score=hit.rerank_score,
            chunk_id=hit.chunk_id,
            page_key=hit.page_key,
            node_key=hit.node_key,
            window=hit.window,
        )

    def to_json(self) -> dict[str, Any]:
        """The search candidate of the CLI/HTTP contract; the rerank score stays internal."""
        out: dict[str, Any] = {}
        for locator in ("chunk_id", "page_key", "node_key"):
            if getattr(self, locator):
                out[locator] = getattr(self, locator)
        out.update(
            article_id=self.article_id,
            title=self.title,
            heading_path=list(self.heading_path),
            snippet=self.snippet,
            routes=list(self.routes),
            score=self.score,
        )
        if self.window is not None:
            out["window"] = self.window.to_json()
        return out


@dataclass
class SearchResult:
    query: str
    candidates: list[Candidate]
    diagnostics: dict[str, Any]


@dataclass(frozen=True)
class _Outcome:
    """What one route returned for one query, how long it took and why it failed, if it did."""

    hits: list[Hit]
    ms: float
    error: str | None = None


def _call(route: Route, ctx: RouteContext, query: RouteQuery) -> _Outcome:
    started = time.perf_counter()
    try:
        hits = route.run(ctx, query)
    except Exception as err:  # one broken route must not take the others down
        return _Outcome([], (time.perf_counter() - started) * 1000, str(err) or type(err).__name__)
    return _Outcome(hits, (time.perf_counter() - started) * 1000)


class _Run:
    """Collects one search's route lists, keys, failures and timings, in the order they are recorded."""

    def __init__(self) -> None:
        self.groups: list[tuple[Route, list[Hit]]] = []
        self.primary: list[bool] = []
        """Per group: whether it answers the question itself rather than a rewritten sub-query."""
        self.query_texts: list[str] = []
        """Per group: the text of the query it answers."""
        self.legacy = False
        self.degraded: dict[str, str] = {}
        self.timings: defaultdict[str, float] = defaultdict(float)

    def record(self, route: Route, query: RouteQuery, outcome: _Outcome) -> list[Hit]:
        if outcome.error is not None:
            self.degraded[route.name] = outcome.error
        self.timings[route.name] += outcome.ms
        if outcome.hits:
            self.groups.append((route, outcome.hits))
            self.primary.append(query.primary)
            self.query_texts.append(query.text)
        return outcome.hits

    def route(self, route: Route, ctx: RouteContext, query: RouteQuery) -> list[Hit]:
        return self.record(route, query, _call(route, ctx, query))

    def timed(self, name: str, started: float) -> None:
        self.timings[name] += (time.perf_counter() - started) * 1000

    def lists_of(self, text: str) -> list[list[Hit]]:
        return [hits for (_, hits), q in zip(self.groups, self.query_texts) if q == text]

    def has_primary_hits(self) -> bool:
        return any(route.tier is Tier.PRIMARY for route, _ in self.groups)


def _embed_queries(
    run: _Run,
    embedder: Embedder | None,
    queries: Sequence[str],
    index: RecallIndex,
    cache: QueryVectorCache,
    active: Sequence[Route],
) -> dict[str, np.ndarray]:
    vector_routes = [r for r in active if r.vectors is not None]
    if not vector_routes:
        return {}
    if embedder is None:
        for route in vector_routes:
            run.degraded[route.name] = "no query embedder configured"
        return {}
    for route in vector_routes:
        if route.vectors is not None and index.vectors.get(route.vectors.name) is None:
            run.degraded[route.name] = f"snapshot has no {route.vectors.name} table"
    started = time.perf_counter()
    try:
        return cache.embed(embedder, queries)
    except Exception as err:
        for route in vector_routes:
            run.degraded[route.name] = str(err) or type(err).__name__
        return {}
    finally:
        run.timed("embed", started)


def _runnable(route: Route, ctx: RouteContext, query: RouteQuery) -> bool:
    """A vector route needs the query's embedding and its table loaded; every other route can always run."""
    if route.vectors is None:
        return True
    return query.vector is not None and ctx.index.vectors.get(route.vectors.name) is not None


_CORES = os.cpu_count() or 1
_VECTOR_SCANS = ThreadPoolExecutor(max_workers=max(1, _CORES - 1), thread_name_prefix="recall-vectors")
"""Runs vector routes beside the lexical ones: the quantised scan releases the GIL, so on a free core it
costs a search no wall time. With the calling thread, its workers fill the cores and no more: on 2 cores one
worker running both scans beat two (p50 13.6–14.7 against 14.3–15.9 ms at 100,000 chunks). Shared by every
search of the process."""


class _InFlight:
    """How many searches of this process are embedding or running routes now. Scans go to the pool only
    while each such search can have two cores: when requests already keep the cores busy, handing work to
    more threads only adds switching (8 clients over HTTP lost ~12 % of their throughput to it)."""

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    @contextmanager
    def entered(self) -> Iterator[bool]:
        """Counts this search in; yields whether it may scan on the pool."""
        with self._lock:
            self._count += 1
            spare = self._count * 2 <= _CORES
        try:
            yield spare
        finally:
            with self._lock:
                self._count -= 1


_IN_FLIGHT = _InFlight()


def _primary(route: Route, ctx: RouteContext, query: RouteQuery) -> bool:
    return route.tier is Tier.PRIMARY and _runnable(route, ctx, query)


def _long_scan(route: Route, ctx: RouteContext) -> bool:
    """A vector route whose scan pays for a hand-off to `_VECTOR_SCANS`: one through a quantised index (a table
    of at least `ANN_MIN_ROWS` vectors) or a LanceDB table. An exact product over a smaller table takes a few
    tenths of a millisecond, less than the hand-off: all four dev sets (326–4,197 vectors a table) searched
    0–0.4 ms faster on the calling thread (p50, recall without the query embedding), while at 100,000
    chunks the pool keeps its lead (p50 6.7 against 9.7 ms)."""
    if route.vectors is None:
        return False
    table = ctx.index.vectors.get(route.vectors.name)
    return table is not None and getattr(table, "ann", True) is not None


def _recall(run: _Run, ctx: RouteContext, queries: Sequence[RouteQuery], active: Sequence[Route], parallel: bool) -> None:
    """Every active route for every query; a fallback route only when the routes it backs up found nothing
    for that query; the legacy routes only when no primary route found anything.

    With `parallel`, vector routes over large tables (`_long_scan`) start first, on `_VECTOR_SCANS`, while the
    other primary routes run here.
    Outcomes are recorded in registry order whatever finishes first, so the fusion sees the same lists in the
    same order. A scan no worker has started by the time it is needed runs here instead."""
    pooled = {route.name for route in active if parallel and _long_scan(route, ctx)}
    scans = [
        (i, route, query, _VECTOR_SCANS.submit(_call, route, ctx, query))
        for i, query in enumerate(queries)
        for route in active
        if route.name in pooled and _primary(route, ctx, query)
    ]
    outcomes: dict[tuple[int, str], _Outcome] = {
        (i, route.name): _call(route, ctx, query)
        for i, query in enumerate(queries)
        for route in active
        if route.name not in pooled and _primary(route, ctx, query)
    }
    for i, route, query, scan in scans:
        outcomes[(i, route.name)] = _call(route, ctx, query) if scan.cancel() else scan.result()
    for i, query in enumerate(queries):
        found: set[str] = set()
        for route in active:
            if route.tier is Tier.LEGACY or not _runnable(route, ctx, query):
                continue
            if route.tier is Tier.FALLBACK:
                if found.intersection(route.fallback_for):
                    continue
                outcome = _call(route, ctx, query)
            else:
                outcome = outcomes[(i, route.name)]
            if run.record(route, query, outcome):
                found.add(route.name)
    if run.has_primary_hits():
        return
    run.legacy = True
    for query in queries:
        for route in active:
            if route.tier is Tier.LEGACY and _runnable(route, ctx, query):
                run.route(route, ctx, query)


@dataclass
class SearchState:
    """One search as it passes through `STAGES`: what every stage reads, and what each leaves for the next."""

    index: RecallIndex
    query: Query
    scope: Scope
    config: RecallConfig
    limit: int
    now: datetime
    embedder: Embedder | None
    cache: QueryVectorCache
    sub_queries: Sequence[str] | None
    started: float = field(default_factory=time.perf_counter)
    run: _Run = field(default_factory=_Run)
    texts: list[str] = field(default_factory=list)
    """The question, then its sub-queries (`rewrite.build_queries`)."""
    ctx: RouteContext | None = None
    active: list[Route] = field(default_factory=list)
    """The routes this search runs, in registry order."""
    terms: Callable[[str], list[str]] | None = None
    """A query's terms: the index's query tokens, spelling-corrected when the config says so."""
    fused: list[Hit] = field(default_factory=list)
    articles: ArticleStage = field(default_factory=lambda: ArticleStage([], []))
    leads: list[Hit] = field(default_factory=list)
    """Each sub-query's first article (`balance.sub_query_leads`), kept right after the first hit."""
    rerank_points: dict[str, float] = field(default_factory=dict)
    """The rerank's field and sentence points per hit key: they do not depend on the pool, so the reranks of
    one search (its pool and the fresh tail's candidates) share them."""
    reranked: list[Hit] = field(default_factory=list)
    rerank_applied: bool = False
    tail_order: list[Hit] = field(default_factory=list)
    """What the fresh tail draws new articles from."""
    selection: DiverseSelection | None = None
    feature_log: list[PoolRows] | None = None
    """When set, each rerank pool's hits (article id, chunk id) and feature rows are appended (`petrichor eval
    --ranker-features`)."""
    ranker: LinearRanker | None = None
    """The learned ranker when `RecallConfig.ranker` asks for it and the shipped model loads (`plan`)."""

    @property
    def focused(self) -> bool:
        return self.scope.article_id is not None


def plan(state: SearchState) -> None:
    """The queries to search (the question and its rewrites), the caller's access and the routes to run."""
    index, config = state.index, state.config
    state.texts = build_queries(state.query, state.sub_queries, clauses=config.rewrite, coordinated=config.coordinated)
    fingerprint = state.embedder.fingerprint if state.embedder else None
    state.ctx = RouteContext(index, index.access(state.scope, state.now), fingerprint, config.parent_score)
    model_questions = index.articles.model_questions
    state.active = [r for r in routes.registered() if config.runs(r.name, model_questions) and (r.focused or not state.focused)]
    tokenize = index.tokenizer.query
    state.terms = (lambda q: corrected(tokenize(q), index.spelling)) if config.spelling else tokenize
    state.ranker = load_ranker() if config.ranker == "learned" else None


def recall(state: SearchState) -> None:
    """Every query embedded once, then every active route run for it (`_recall`); timed per route."""
    assert state.terms is not None and state.ctx is not None  # set by `plan`
    with _IN_FLIGHT.entered() as parallel:
        vectors = _embed_queries(state.run, state.embedder, state.texts, state.index, state.cache, state.active)
        queries = [
            RouteQuery(q, state.terms(q), top_k=state.config.route_top_k, vector=vectors.get(q), primary=i == 0) for i, q in enumerate(state.texts)
        ]
        _recall(state.run, state.ctx, queries, state.active, parallel)


def fuse_lists(state: SearchState) -> None:
    """RRF of every route list, each weighed by its route and by whether it answers the question itself."""
    config, run = state.config, state.run
    route_weights = config.weights()
    group_weights = [
        route_weights.get(route.name, 1.0) * (1.0 if primary else config.sub_query_weight) for (route, _), primary in zip(run.groups, run.primary)
    ]
    state.fused = fuse([hits for _, hits in run.groups], config.fusion_top_k, group_weights=group_weights)


def balance(state: SearchState) -> None:
    """The best articles' hits interleaved (one article when focused), each sub-query's lead article kept."""
    config = state.config
    article_top_k = 1 if state.focused else config.article_top_k
    stage = select_articles(state.fused, article_top_k, config.per_article_top_k, config.article_rank_weights)
    if config.sub_query_leads and not state.focused:
        state.leads = sub_query_leads(state.fused, [state.run.lists_of(q) for q in state.texts[1:]])
    state.articles = keep_leads(stage, state.leads)


def _rank(state: SearchState, hits: Sequence[Hit]) -> list[Hit]:
    """The local rerank of `hits` against the question, sharing this search's per-hit points: the hand-tuned
    points, or the learned ranker's order over the pool's feature rows (`features.pool_features`), the hand
    points one of them. The rows are logged when the search was asked to (`feature_log`)."""
    config, index = state.config, state.index
    assert state.terms is not None  # set by `plan`
    token_weights = partial(idf_weights, idf=index.bm25["chunk"].idf) if config.rerank_idf else None
    dense_routes = [r.name for r in state.active if r.vectors is not None]
    ranked = rerank(
        state.query,
        hits,
        tokenize=state.terms,
        token_weights=token_weights,
        dense_weight=config.rerank_dense,
        dense_routes=dense_routes,
        prior_weight=config.rerank_prior,
        prior_range=config.prior_range,
        sentence_weight=config.rerank_sentence,
        lexical=state.rerank_points,
    )
    if len(hits) <= 1 or (state.ranker is None and state.feature_log is None):
        return ranked
    tokens = [t for t in map(normalize_knowledge_text, state.terms(state.query)) if t]
    hand = {h.key: h.rerank_score or 0.0 for h in ranked}
    rows = pool_features(
        hits,
        normalize_knowledge_text(state.query),
        tokens,
        token_weights(tokens) if token_weights is not None else None,
        [hand[h.key] for h in hits],
        dense_routes,
        len(state.active),
    )
    if state.feature_log is not None:
        state.feature_log.append(([(h.article_id, h.chunk_id) for h in hits], rows))
    if state.ranker is None:
        return ranked
    learned = []
    for hit, score in zip(hits, state.ranker.scores(rows)):
        entry = hit.copy()
        entry.rerank_score = score
        learned.append(entry)
    return sorted(learned, key=lambda h: -(h.rerank_score or 0.0))


def rerank_pool(state: SearchState) -> None:
    """The balanced pool's first `rerank_top_k` hits in the local rerank's order, the sub-query leads after
    the first."""
    top = state.articles.hits[: state.config.rerank_top_k]
    state.rerank_applied = state.config.rerank and len(top) > 1
    state.reranked = leads_after_first(_rank(state, top) if state.rerank_applied else top, state.leads)


def order_tail(state: SearchState) -> None:
    """What the fresh tail draws from: the best hits of the first articles in the rerank's order, then the
    fused list (the fused list alone without the rerank)."""
    config = state.config
    state.tail_order = state.fused
    if config.rerank and config.fresh_tail and not state.focused:
        state.tail_order = tail_candidates(state.fused, partial(_rank, state), config.tail_articles, config.article_rank_weights)


def diversify(state: SearchState) -> None:
    """The reranked list without near duplicates and within the per-article cap, backfilled to `limit` from
    the article stage first, then from the rest of the fused list."""
    limit, config, articles = state.limit, state.config, state.articles.hits
    kept = {h.key for h in articles}
    backfill = articles + [h for h in state.fused if h.key not in kept]
    if config.diversity:
        max_per_article = limit if state.focused else config.max_per_article
        state.selection = select_diverse(state.reranked, limit, max_per_article, backfill=backfill, tokens_of=state.index.tokenizer.token_set)
        return
    state.selection = DiverseSelection(limit, limit)
    first: dict[str, Hit] = {}
    for hit in [*state.reranked, *backfill]:
        first.setdefault(hit.key, hit)
    state.selection.hits = list(first.values())[:limit]


def keep_fresh_tail(state: SearchState) -> None:
    """An unfocused list's last `fresh_tail` places for articles it does not list yet."""
    if state.config.fresh_tail and not state.focused:
        assert state.selection is not None  # set by `diversify`
        state.selection.hits = fresh_tail(state.selection.hits, state.tail_order, state.limit, state.config.fresh_tail)


STAGES: tuple[tuple[str | None, Callable[[SearchState], None]], ...] = (
    ("access", plan),
    (None, recall),  # times the embedding and each route itself
    ("fusion", fuse_lists),
    ("fusion", balance),
    ("rerank", rerank_pool),
    ("rerank", order_tail),
    ("diversity", diversify),
    ("diversity", keep_fresh_tail),
)
"""The search, in order: each stage a plain function of the state, timed under its name in
`diagnostics["timingsMs"]`."""


def _diagnostics(state: SearchState) -> dict[str, Any]:
    run, texts, selection = state.run, state.texts, state.selection
    assert selection is not None  # set by `diversify`
    out: dict[str, Any] = {
        "query": state.query,
        "rewrittenQueries": texts[1:],
        "subQueryCount": len(texts) - 1,
        "retrievalScope": state.scope.retrieval_scope,
        **{r.diagnostics_key: [] for r in routes.registered()},
    }
    for route, hits in run.groups:
        out[route.diagnostics_key].extend(h.key for h in hits)
    out.update(
        treeAttempted=run.legacy,
        fusionKeys=[h.key for h in state.fused],
        selectedArticleIds=state.articles.article_keys,
        diversityDroppedKeys=selection.dropped_keys,
        finalKeys=[h.key for h in selection.hits],
        rerankApplied=state.rerank_applied,
        rerankStrategy=STRATEGY if state.rerank_applied else "skipped",
        degraded=run.degraded,
        timingsMs={name: round(ms, 3) for name, ms in run.timings.items()},
    )
    return out


def search(
    index: RecallIndex,
    query: str,
    *,
    scope: Scope,
    embedder: Embedder | None = None,
    limit: int | None = None,
    sub_queries: Sequence[str] | None = None,
    now: datetime | None = None,
    cache: QueryVectorCache = QUERY_VECTORS,
    config: RecallConfig = DEFAULT_CONFIG,
    feature_log: list[PoolRows] | None = None,
) -> SearchResult:
    """Search the readable part of `index` for `query` (plus `sub_queries`, else the rewrite's clauses).
    Returns at most `limit` candidates (default `config.limit`; callers bound it, the HTTP schema does for
    requests); `now` decides which public shares have expired; `config` is the product's unless an
    evaluation varies it; `feature_log`, when given, receives each rerank pool's hits and feature rows."""
    limit = config.limit if limit is None else limit
    if limit < 1:
        raise ValueError("limit must be at least 1")
    state = SearchState(index, Query.of(query), scope, config, limit, now or datetime.now(UTC), embedder, cache, sub_queries)
    state.feature_log = feature_log
    for name, stage in STAGES:
        started = time.perf_counter()
        stage(state)
        if name is not None:
            state.run.timed(name, started)
    state.run.timed("total", state.started)
    assert state.selection is not None  # set by `diversify`
    return SearchResult(state.query, [Candidate.from_hit(h) for h in state.selection.hits], _diagnostics(state))
