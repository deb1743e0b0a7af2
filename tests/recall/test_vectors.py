"""Vector routes over real LanceDB tables (4-dimensional, in tmp_path); the embedder is a query-side double."""

from __future__ import annotations

from datetime import UTC, datetime

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from petrichor_core.contract.schemas import vector_schema
from petrichor_serving.recall import RecallConfig, Scope, search
from petrichor_serving.recall.query_vectors import QueryVectorCache

from .synthetic import FailingEmbedder, FixedEmbedder, SnapshotRows
from .test_tenants import ACME_KB, GLOBEX_KB, tenant_rows

NOW = datetime(2029, 6, 1, tzinfo=UTC)
FP = "fixed:4:v1"
QUERY = "持久化方案"
NEAR = [1.0, 0.0, 0.0, 0.0]


def _unit(v) -> list[float]:
    v = np.asarray(v, dtype=np.float32)
    return (v / np.linalg.norm(v)).tolist()


def _vector_table(db, name: str, rows: list[dict]) -> object:
    return db.create_table(name, data=pa.Table.from_pylist(rows, schema=vector_schema(4)))


def _row(row_id: str, article_id: str, kb: str, tenant: str, vector, fingerprint: str = FP) -> dict:
    return dict(id=row_id, article_id=article_id, kb_id=kb, tenant=tenant, content_hash="h", fingerprint=fingerprint, vector=_unit(vector))


def vector_index(tmp_path):
    """The tenant corpus with LanceDB chunk and question vectors around the query's `NEAR`."""
    rows: SnapshotRows = tenant_rows()
    db = lancedb.connect(tmp_path / "lance")
    chunk_rows = []
    for c in rows.chunks:
        # the globex chunks sit exactly on the query; acme's first chunk is close, the rest further away
        if c["tenant"] == "globex":
            vector = NEAR
        elif c["chunk_id"] == "a1:chunk-001":
            vector = [0.9, 0.1, 0.0, 0.0]
        else:
            vector = [0.2, 0.9, 0.3, 0.0]
        chunk_rows.append(_row(c["chunk_id"], c["article_id"], c["kb_id"], c["tenant"], vector))
    # a vector of another embedding model, nearest of all: must never be searched
    chunk_rows.append(_row("a2:chunk-001", "a2", ACME_KB, "acme", NEAR, fingerprint="other:4:v1"))
    question_rows = [
        _row(q["question_id"], q["article_id"], q["kb_id"], q["tenant"], NEAR if q["tenant"] == "globex" else [0.8, 0.0, 0.2, 0.0])
        for q in rows.questions
    ]
    # two more questions of the same acme chunk, also near: the route keeps one hit per chunk
    for i in range(2):
        question_rows.append(_row(f"a1:chunk-002:extra{i}", "a1", ACME_KB, "acme", [0.85, 0.0, 0.1, 0.0]))
        rows.questions.append(
            dict(
                question_id=f"a1:chunk-002:extra{i}",
                chunk_id="a1:chunk-002",
                article_id="a1",
                kb_id=ACME_KB,
                tenant="acme",
                position=3 + i,
                question=f"主从复制问题{i}",
                index_text=f"主从复制问题{i}",
            )
        )
    # every chunk is one window with the chunk's own vector (a chunk that fits in one window)
    window_rows = []
    for c, v in zip(rows.chunks, chunk_rows):
        window_id = rows.window(c["chunk_id"], 0, c["content"])
        window_rows.append({**v, "id": window_id})
    index = rows.index(
        vectors={
            "chunk_vectors": _vector_table(db, "chunk_vectors", chunk_rows),
            "window_vectors": _vector_table(db, "window_vectors", window_rows),
            "question_vectors": _vector_table(db, "question_vectors", question_rows),
        },
    )
    return index


@pytest.fixture()
def indexed(tmp_path):
    return vector_index(tmp_path)


def test_vector_routes_search_only_the_scope_and_the_embedding_model(indexed):
    embedder = FixedEmbedder({QUERY: NEAR})
    result = search(indexed, QUERY, scope=Scope(tenant="acme"), embedder=embedder, now=NOW, cache=QueryVectorCache())
    d = result.diagnostics
    assert d["degraded"] == {}
    # prefiltered before the top-k: globex rows are nearer but acme still gets its own neighbours
    assert d["chunkVectorKeys"][0] == f"chunk:{ACME_KB}:a1:chunk-001"
    assert all(k.startswith(f"chunk:{ACME_KB}:") for k in d["chunkVectorKeys"] + d["questionVectorKeys"])
    assert len(d["chunkVectorKeys"]) == 3  # the other-model vector of a2:chunk-001 is not among them
    assert f"chunk:{ACME_KB}:a2:chunk-001" in d["chunkVectorKeys"]
    # one hit per chunk from the question vectors
    assert len(d["questionVectorKeys"]) == len(set(d["questionVectorKeys"])) == 3
    assert GLOBEX_KB not in str(result.candidates) and "globex" not in str(d)
    top = result.candidates[0]
    assert "chunk_vector" in top.routes


def test_a_chunk_found_only_through_a_question_shows_the_question(indexed):
    del indexed.vectors["chunk_vectors"]
    del indexed.vectors["window_vectors"]
    embedder = FixedEmbedder({"zzzz": [0.8, 0.0, 0.2, 0.0]})
    result = search(indexed, "zzzz", scope=Scope(tenant="acme"), embedder=embedder, now=NOW, cache=QueryVectorCache())
    assert result.diagnostics["degraded"] == {
        "chunk_vector": "snapshot has no chunk_vectors table",
        "window_vector": "snapshot has no window_vectors table",
    }
    assert result.candidates and all(c.routes == ["question_vector"] for c in result.candidates)
    assert all(c.snippet.startswith("用户问法：") for c in result.candidates)


def test_public_scope_prefilter_lists_readable_articles(indexed):
    embedder = FixedEmbedder({QUERY: NEAR})
    result = search(indexed, QUERY, scope=Scope(public_only=True), embedder=embedder, now=NOW, cache=QueryVectorCache())
    keys = result.diagnostics["chunkVectorKeys"]
    assert {k.split(":")[2] for k in keys} == {"a2", "g4"}


def test_failing_embedder_degrades_only_the_vector_routes(indexed):
    result = search(indexed, QUERY, scope=Scope(tenant="acme"), embedder=FailingEmbedder(), now=NOW, cache=QueryVectorCache())
    degraded = result.diagnostics["degraded"]
    assert degraded == {
        "chunk_vector": "embedding endpoint unavailable",
        "window_vector": "embedding endpoint unavailable",
        "question_vector": "embedding endpoint unavailable",
    }
    assert result.diagnostics["chunkBm25Keys"] and result.candidates


def test_missing_embedder_degrades_vector_routes(indexed):
    result = search(indexed, QUERY, scope=Scope(tenant="acme"), now=NOW)
    assert set(result.diagnostics["degraded"]) == {"chunk_vector", "window_vector", "question_vector"}
    assert result.candidates


def test_a_broken_vector_table_is_recorded_and_the_rest_continue(indexed):
    class Broken:
        def search(self, *args, **kwargs):
            raise OSError("lance file missing")

    indexed.vectors["chunk_vectors"] = Broken()
    embedder = FixedEmbedder({QUERY: NEAR})
    result = search(indexed, QUERY, scope=Scope(tenant="acme"), embedder=embedder, now=NOW, cache=QueryVectorCache())
    assert result.diagnostics["degraded"] == {"chunk_vector": "lance file missing"}
    assert result.diagnostics["questionVectorKeys"] and result.diagnostics["chunkBm25Keys"]


def test_queries_are_embedded_in_one_call_and_cached(indexed):
    embedder = FixedEmbedder({})
    cache = QueryVectorCache()
    question = "请比较 Redis 的持久化方案，以及说明各自适用场景和恢复差异"
    rewrite = RecallConfig(rewrite=True)
    search(indexed, question, scope=Scope(), embedder=embedder, now=NOW, cache=cache, config=rewrite)
    assert embedder.calls == [[question, "比较 Redis 的持久化方案", "说明各自适用场景和恢复差异"]]
    search(indexed, question, scope=Scope(), embedder=embedder, now=NOW, cache=cache, config=rewrite)
    search(indexed, "比较 Redis 的持久化方案", scope=Scope(), embedder=embedder, now=NOW, cache=cache)
    assert len(embedder.calls) == 1
