"""The route registry: a route is one module plus one line in `routes.ROUTES`, and the pipeline, the options
and the index loader see it from there alone. `golden_search.json` pins every search's candidates, order
and scores on the synthetic corpora, with default options and with each route off. It was recorded when the
routes moved into the registry, after a wider comparison with the code before found no difference; regenerate
it only for an intended change of results: `python -m tests.recall.test_route_registry`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from petrichor_serving.recall import RecallConfig, Scope, routes, search
from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.query_vectors import QueryVectorCache
from petrichor_serving.recall.routes import Route, RouteContext, RouteQuery, Tier

from . import test_search, test_tenants, test_vectors
from .synthetic import FixedEmbedder

GOLDEN = Path(__file__).with_name("golden_search.json")
HEADING = "heading_exact"


def heading_exact(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    """Readable chunks whose heading is the query, as a new route would be written."""
    chunks = ctx.index.chunks
    rows = [r for r in np.flatnonzero(ctx.access.chunks).tolist() if chunks.headings[r] == query.text]
    return [ctx.index.chunk_hit(r, HEADING, 1.0) for r in rows[: query.top_k]]


@pytest.fixture()
def with_heading_route(monkeypatch):
    route = Route(HEADING, heading_exact, diagnostics_key="headingKeys", weight=3.0)
    monkeypatch.setattr(routes, "ROUTES", (*routes.ROUTES, route))
    return route


@pytest.fixture(scope="module")
def index():
    return test_search.rows().index()


def test_a_registered_route_shows_up_in_results_and_options(index, with_heading_route):
    result = search(index, "部署", scope=Scope())
    assert result.diagnostics["headingKeys"] == ["chunk:kb:ops:chunk-001"]
    top = result.candidates[0]
    assert top.chunk_id == "ops:chunk-001" and HEADING in top.routes
    assert HEADING in result.diagnostics["timingsMs"]
    assert HEADING in routes.switchable() and RecallConfig().weights()[HEADING] == 3.0
    off = search(index, "部署", scope=Scope(), config=RecallConfig(disabled_routes=frozenset({HEADING})))
    assert off.diagnostics["headingKeys"] == [] and HEADING not in off.diagnostics["timingsMs"]


def test_unregistered_names_are_refused():
    with pytest.raises(ValueError, match=HEADING):
        RecallConfig(disabled_routes=frozenset({HEADING}))


@pytest.mark.parametrize("name", routes.switchable())
def test_switching_a_route_off_by_name(index, name):
    result = search(index, "Redis Sentinel 故障转移", scope=Scope(), config=RecallConfig(disabled_routes=frozenset({name})))
    assert name not in result.diagnostics["timingsMs"]
    assert all(name not in c.routes for c in result.candidates)


def test_declared_weights_and_tiers():
    assert RecallConfig().weights() == {routes.QUESTION_VECTOR: 0.5, routes.QUESTION_BM25: 0.5}
    assert RecallConfig(route_weights=()).weights() == {}
    tiers = {r.name: r.tier for r in routes.registered()}
    assert tiers["article_title"] is Tier.FALLBACK and tiers["tree_bm25"] is Tier.LEGACY
    assert set(routes.vector_tables()) == {"chunk_vectors", "window_vectors", "question_vectors"}


def test_a_vector_route_needs_its_declared_table(tmp_path):
    index = test_vectors.vector_index(tmp_path)
    assert set(index.vectors) == {"chunk_vectors", "window_vectors", "question_vectors"}
    assert test_search.rows().index(vectors={"unknown_vectors": object()}).vectors == {}


# ------------------------------------------------------------------------------------------ golden


QUERIES = (
    "Redis Sentinel 故障转移",
    "哨兵",
    "Zookeeper",
    "怎么部署 Redis",
    "持久化方案",
    "请比较 Redis 的持久化方案，以及说明各自适用场景和恢复差异",
    "zzzz 无关",
)
NOW = test_tenants.NOW


def _variants() -> dict[str, RecallConfig]:
    out = {"default": RecallConfig()}
    out.update({f"no_{n}": RecallConfig(disabled_routes=frozenset({n})) for n in routes.switchable() if n not in routes.default_off()})
    out.update({f"{n}_on": RecallConfig(enabled_routes=frozenset({n})) for n in routes.default_off()})
    return out


def _round(score: float | None) -> float | None:
    """Rerank scores to 6 places: exact enough to pin the order, robust to float summation order."""
    return None if score is None else round(score, 6)


def _record(tmp_path: Path) -> dict[str, list]:
    embedder = FixedEmbedder({"持久化方案": test_vectors.NEAR, "zzzz 无关": [0.8, 0.0, 0.2, 0.0]})
    corpora = {
        "search": (test_search.rows().index(), None, {"all": Scope(), "focused": Scope(article_id="ops")}),
        "tenants": (test_tenants.tenant_rows().index(), None, {"acme": Scope(tenant="acme"), "public": Scope(public_only=True)}),
        "vectors": (test_vectors.vector_index(tmp_path), embedder, {"acme": Scope(tenant="acme"), "public": Scope(public_only=True)}),
    }
    out = {}
    for corpus, (index, emb, scopes) in corpora.items():
        for scope_name, scope in scopes.items():
            for variant, options in _variants().items():
                for q in QUERIES:
                    result = search(index, q, scope=scope, embedder=emb, now=NOW, cache=QueryVectorCache(), config=options)
                    d = result.diagnostics
                    out[f"{corpus}|{scope_name}|{variant}|{q}"] = {
                        "final": [[key, c.score, _round(c.rerank_score), c.routes] for key, c in zip(d["finalKeys"], result.candidates)],
                        "fused": d["fusionKeys"],
                        "degraded": d["degraded"],
                    }
    return out


def test_search_results_match_the_recorded_ones(tmp_path):
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    current = json.loads(json.dumps(_record(tmp_path), ensure_ascii=False))
    assert current.keys() == recorded.keys()
    for key in recorded:
        assert current[key] == recorded[key], key


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        lines = [json.dumps({k: v}, ensure_ascii=False)[1:-1] for k, v in _record(Path(tmp)).items()]
        GOLDEN.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    sys.exit(0)
