"""Hybrid search: rewrite → five routes per query → RRF → article balance → local rerank → diversity.

Every stage is a plain function of the previous one's output; this module only wires them, times them and
records what each produced, so a poor answer can be traced to the route or stage that lost the evidence.
A failing route is recorded in `diagnostics["degraded"]` and the others carry on.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from typing import Any

import numpy as np

from petrichor_pipeline.models.protocols import Embedder
from petrichor_serving.recall import routes
from petrichor_serving.recall.access import Access, Scope
from petrichor_serving.recall.balance import PER_ARTICLE_TOP_K, select_articles
from petrichor_serving.recall.diversity import MAX_PER_ARTICLE, select_diverse
from petrichor_serving.recall.fusion import FUSION_TOP_K, fuse
from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.index import RecallIndex
from petrichor_serving.recall.options import DEFAULT_OPTIONS, SearchOptions
from petrichor_serving.recall.query_vectors import QUERY_VECTORS, QueryVectorCache
from petrichor_serving.recall.rerank import RERANK_TOP_K, STRATEGY, idf_weights, rerank
from petrichor_serving.recall.rewrite import build_queries

DEFAULT_LIMIT = 10
MAX_LIMIT = 20

_ROUTE_DIAGNOSTICS = {
    routes.CHUNK_VECTOR: "chunkVectorKeys",
    routes.QUESTION_VECTOR: "questionVectorKeys",
    routes.CHUNK_BM25: "chunkBm25Keys",
    routes.QUESTION_BM25: "questionBm25Keys",
    routes.WIKI: "wikiKeys",
    routes.ARTICLE_TITLE: "articleTitleKeys",
    routes.TREE_VECTOR: "treeKeys",
    routes.TREE_BM25: "treeKeys",
}


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

    @classmethod
    def from_hit(cls, hit: Hit) -> "Candidate":
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
        return out


@dataclass
class SearchResult:
    query: str
    candidates: list[Candidate]
    diagnostics: dict[str, Any]


class _Run:
    """Runs routes for one search: collects their ranked lists, keys, failures and timings."""

    def __init__(self) -> None:
        self.groups: list[tuple[str, list[Hit]]] = []
        self.legacy = False
        self.degraded: dict[str, str] = {}
        self.timings: defaultdict[str, float] = defaultdict(float)

    def route(self, name: str, fn: Callable[..., list[Hit]], *args: Any) -> list[Hit]:
        started = time.perf_counter()
        try:
            hits = fn(*args)
        except Exception as err:  # one broken route must not take the others down
            self.degraded[name] = str(err) or type(err).__name__
            hits = []
        self.timings[name] += (time.perf_counter() - started) * 1000
        if hits:
            self.groups.append((name, hits))
        return hits

    def timed(self, name: str, started: float) -> None:
        self.timings[name] += (time.perf_counter() - started) * 1000

    def has_modern_hits(self) -> bool:
        return any(name in routes.MODERN_ROUTES for name, _ in self.groups)


def _embed_queries(
    run: _Run,
    embedder: Embedder | None,
    queries: Sequence[str],
    index: RecallIndex,
    cache: QueryVectorCache,
    options: SearchOptions,
) -> dict[str, np.ndarray]:
    vector_routes = tuple(
        (name, table)
        for name, table in ((routes.CHUNK_VECTOR, index.chunk_vectors), (routes.QUESTION_VECTOR, index.question_vectors))
        if options.runs(name)
    )
    if not vector_routes:
        return {}
    if embedder is None:
        for name, _ in vector_routes:
            run.degraded[name] = "no query embedder configured"
        return {}
    for name, table in vector_routes:
        if table is None:
            run.degraded[name] = f"snapshot has no {name}s table"
    started = time.perf_counter()
    try:
        return cache.embed(embedder, queries)
    except Exception as err:
        for name, _ in vector_routes:
            run.degraded[name] = str(err) or type(err).__name__
        return {}
    finally:
        run.timed("embed", started)


def _recall(
    run: _Run,
    index: RecallIndex,
    access: Access,
    queries: Sequence[str],
    vectors: dict[str, np.ndarray],
    fingerprint: str | None,
    focused: bool,
    options: SearchOptions,
) -> None:
    """Every enabled route for every query; the legacy tree only when no modern route found anything."""
    runs = options.runs
    for q in queries:
        terms = index.tokenizer.query(q)
        vector = vectors.get(q)
        if vector is not None and index.chunk_vectors is not None and runs(routes.CHUNK_VECTOR):
            run.route(routes.CHUNK_VECTOR, routes.chunk_vector, index, access, vector, fingerprint)
        if vector is not None and index.question_vectors is not None and runs(routes.QUESTION_VECTOR):
            run.route(routes.QUESTION_VECTOR, routes.question_vector, index, access, vector, fingerprint)
        lexical: list[Hit] = []
        if runs(routes.CHUNK_BM25):
            lexical += run.route(routes.CHUNK_BM25, routes.chunk_bm25, index, access, terms)
        if runs(routes.QUESTION_BM25):
            lexical += run.route(routes.QUESTION_BM25, routes.question_bm25, index, access, terms)
        if not lexical:
            run.route(routes.ARTICLE_TITLE, routes.article_title, index, access, terms)
        if not focused and runs(routes.WIKI):
            run.route(routes.WIKI, routes.wiki_lexical, index, access, q, terms)
    if run.has_modern_hits():
        return
    run.legacy = True
    for q in queries:
        vector = vectors.get(q)
        if vector is not None and index.tree_vectors is not None:
            run.route(routes.TREE_VECTOR, routes.tree_vector, index, access, vector, fingerprint)
        run.route(routes.TREE_BM25, routes.tree_bm25, index, access, index.tokenizer.query(q))


def search(
    index: RecallIndex,
    query: str,
    *,
    scope: Scope,
    embedder: Embedder | None = None,
    limit: int = DEFAULT_LIMIT,
    sub_queries: Sequence[str] | None = None,
    now: datetime | None = None,
    cache: QueryVectorCache = QUERY_VECTORS,
    options: SearchOptions = DEFAULT_OPTIONS,
) -> SearchResult:
    """Search the readable part of `index` for `query` (plus `sub_queries`, else the rewrite's clauses).
    `limit` is clamped to 1..20; `now` decides which public shares have expired; `options` switch stages
    off for evaluation and default to the product's behaviour."""
    query = query.strip()
    if not query:
        raise ValueError("query must not be empty")
    limit = max(1, min(MAX_LIMIT, limit or DEFAULT_LIMIT))
    now = now or datetime.now(timezone.utc)
    focused = scope.article_id is not None
    tokenize = index.tokenizer.query
    started = time.perf_counter()
    run = _Run()

    queries = build_queries(query, sub_queries)
    access = index.access(scope, now)
    run.timed("access", started)
    vectors = _embed_queries(run, embedder, queries, index, cache, options)
    _recall(run, index, access, queries, vectors, embedder.fingerprint if embedder else None, focused, options)

    stage_started = time.perf_counter()
    fused = fuse([hits for _, hits in run.groups], FUSION_TOP_K, dict(options.route_weights))
    stage = select_articles(fused, 1 if focused else options.article_top_k, PER_ARTICLE_TOP_K)
    run.timed("fusion", stage_started)

    stage_started = time.perf_counter()
    top = stage.hits[:RERANK_TOP_K]
    rerank_applied = options.rerank and len(top) > 1
    token_weights = partial(idf_weights, idf=index.chunk_bm25.idf) if options.rerank_idf else None
    reranked = rerank(query, top, tokenize, token_weights) if rerank_applied else top
    run.timed("rerank", stage_started)

    stage_started = time.perf_counter()
    max_per_article = limit if focused else MAX_PER_ARTICLE
    # backfill from the article stage first, then from the rest of the fused list (seed §9.4), per-article cap kept
    backfill = stage.hits + [h for h in fused if h.key not in {s.key for s in stage.hits}]
    selection = select_diverse(reranked, limit, max_per_article, backfill=backfill, tokenize=tokenize)
    run.timed("diversity", stage_started)
    run.timed("total", started)

    diagnostics: dict[str, Any] = {
        "query": query,
        "rewrittenQueries": queries[1:],
        "subQueryCount": len(queries) - 1,
        "retrievalScope": scope.retrieval_scope,
        **{key: [] for key in dict.fromkeys(_ROUTE_DIAGNOSTICS.values())},
    }
    for name, hits in run.groups:
        diagnostics[_ROUTE_DIAGNOSTICS[name]].extend(h.key for h in hits)
    diagnostics.update(
        treeAttempted=run.legacy,
        fusionKeys=[h.key for h in fused],
        selectedArticleIds=stage.article_keys,
        diversityDroppedKeys=selection.dropped_keys,
        finalKeys=[h.key for h in selection.hits],
        rerankApplied=rerank_applied,
        rerankStrategy=STRATEGY if rerank_applied else "skipped",
        degraded=run.degraded,
        timingsMs={name: round(ms, 3) for name, ms in run.timings.items()},
    )
    return SearchResult(query, [Candidate.from_hit(h) for h in selection.hits], diagnostics)
