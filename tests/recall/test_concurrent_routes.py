"""Vector routes over large tables run beside the lexical ones, yet a search's lists, their order and its
results are those of running every route in turn: outcomes are recorded in registry order, whatever finishes
first. The test index is small, so the tests of the pool treat every vector table as a large one."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from petrichor_serving.recall import Scope, pipeline, routes, search
from petrichor_serving.recall.query_vectors import QueryVectorCache

from . import test_tenants, test_vectors
from .synthetic import FixedEmbedder

QUERIES = ("Redis Sentinel 故障转移", "持久化方案", "请比较 Redis 的持久化方案，以及说明各自适用场景和恢复差异")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return test_vectors.vector_index(tmp_path_factory.mktemp("vectors"))


@pytest.fixture
def pooled(monkeypatch):
    """Every vector route scans on the pool, as over tables with a quantised index."""
    monkeypatch.setattr(pipeline, "_long_scan", lambda route, ctx: route.vectors is not None)


def _results(index) -> list[tuple]:
    embedder = FixedEmbedder({"持久化方案": test_vectors.NEAR})
    out = []
    for q in QUERIES:
        r = search(index, q, scope=Scope(tenant="acme"), embedder=embedder, now=test_tenants.NOW, cache=QueryVectorCache())
        d = r.diagnostics
        out.append((d["finalKeys"], d["fusionKeys"], d["windowVectorKeys"], d["chunkVectorKeys"], [c.score for c in r.candidates]))
    return out


def _slowed(route, seconds: float):
    def run(ctx, query):
        time.sleep(seconds)
        return route.run(ctx, query)

    return replace(route, run=run)


def test_a_vector_route_finishing_last_changes_nothing(index, monkeypatch, pooled):
    before = _results(index)
    assert any(keys for _, _, keys, _, _ in before), "the vector routes must find something for this test to mean anything"
    slowed = tuple(_slowed(r, 0.05) if r.vectors is not None else r for r in routes.ROUTES)
    monkeypatch.setattr(routes, "ROUTES", slowed)
    assert _results(index) == before


def test_a_scan_no_worker_started_runs_in_the_caller(index, monkeypatch, pooled):
    """With every worker of the pool busy elsewhere, the search does not wait for one."""
    before = _results(index)
    busy = ThreadPoolExecutor(max_workers=1)
    release = threading.Event()
    busy.submit(release.wait, 30)
    monkeypatch.setattr(pipeline, "_VECTOR_SCANS", busy)
    try:
        started = time.perf_counter()
        assert _results(index) == before
        assert time.perf_counter() - started < 20
    finally:
        release.set()
        busy.shutdown()


def test_a_failing_vector_route_degrades_alone(index, monkeypatch):
    def broken(ctx, query):
        raise RuntimeError("scan failed")

    failing = tuple(replace(r, run=broken) if r.name == routes.WINDOW_VECTOR else r for r in routes.ROUTES)
    monkeypatch.setattr(routes, "ROUTES", failing)
    r = search(
        index,
        "持久化方案",
        scope=Scope(tenant="acme"),
        embedder=FixedEmbedder({"持久化方案": test_vectors.NEAR}),
        now=test_tenants.NOW,
        cache=QueryVectorCache(),
    )
    assert r.diagnostics["degraded"] == {routes.WINDOW_VECTOR: "scan failed"}
    assert r.diagnostics["chunkVectorKeys"] and r.candidates


class _CountingPool(ThreadPoolExecutor):
    def __init__(self):
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


def test_scans_leave_the_pool_alone_while_other_searches_hold_the_cores(index, monkeypatch, pooled):
    pool = _CountingPool()
    monkeypatch.setattr(pipeline, "_VECTOR_SCANS", pool)
    monkeypatch.setattr(pipeline, "_CORES", 2)
    try:
        before = _results(index)
        alone = pool.submitted
        assert alone > 0
        with pipeline._IN_FLIGHT.entered():  # another search is embedding or running routes
            assert _results(index) == before
        assert pool.submitted == alone
    finally:
        pool.shutdown()


def test_only_scans_through_a_quantised_index_go_to_the_pool(index, monkeypatch):
    """An exact product over a small table costs less than handing it to another thread and back."""
    pool = _CountingPool()
    monkeypatch.setattr(pipeline, "_VECTOR_SCANS", pool)
    monkeypatch.setattr(pipeline, "_CORES", 2)
    try:
        before = _results(index)
        assert pool.submitted == 0 and any(keys for _, _, keys, _, _ in before)
        window_vector = next(r for r in routes.ROUTES if r.name == routes.WINDOW_VECTOR)
        ctx = routes.RouteContext(index, None, None)
        assert not pipeline._long_scan(window_vector, ctx)
        large = replace(index.vectors[window_vector.vectors.name], ann=object())
        monkeypatch.setitem(index.vectors, window_vector.vectors.name, large)
        assert pipeline._long_scan(window_vector, ctx)
    finally:
        pool.shutdown()
