"""A build embeds what search reads and nothing else: chunks and windows by default, the generated questions
only when the question routes search them (`route_tables`). Snapshots without question vectors serve."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from petrichor_core.config import BUCKETS, Settings
from petrichor_core.contract.manifest import OFFLINE_CHAT_PREFIX
from petrichor_core.contract.route_tables import QUESTION_VECTORS, searched_vector_tables
from petrichor_core.contract.schemas import VECTOR_TABLES
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.vectors import vectors_step
from petrichor_serving.recall import RecallConfig, Scope, routes, search
from tests.conftest import CORPUS
from tests.pipeline.snapshot_io import current_version, snapshot_rows


class CountingEmbedder:
    """Records every text it is asked to embed; its vectors only need the right shape."""

    model_id = "counting"
    dim = 4
    fingerprint = "counting:4:v1"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed_passages(self, texts):
        self.texts.extend(texts)
        return np.asarray([[1.0, len(t), 0.0, 0.0] for t in texts], dtype=np.float32)

    embed_queries = embed_passages


def test_the_declaration_follows_the_question_routes_rule():
    offline, configured = f"{OFFLINE_CHAT_PREFIX}local:v1", "gpt-x:v1"
    assert searched_vector_tables("model", offline) == {"chunk_vectors", "window_vectors"}
    assert searched_vector_tables("model", configured) == set(VECTOR_TABLES)
    assert searched_vector_tables("always", offline) == set(VECTOR_TABLES)
    with pytest.raises(ValueError, match="question routes must be one of"):
        searched_vector_tables("sometimes", offline)
    # serving's routes read exactly the declared tables, and only a question route reads the question vectors
    assert set(routes.vector_tables()) == set(VECTOR_TABLES)
    readers = {r.name for r in routes.registered() if r.vectors is not None and r.vectors.name == QUESTION_VECTORS}
    assert readers and readers <= routes.QUESTION_ROUTES
    assert not RecallConfig().runs(routes.QUESTION_VECTOR, model_questions=False)
    assert RecallConfig(question_routes="always").runs(routes.QUESTION_VECTOR, model_questions=False)


def _embed_cold(warehouse, tmp_path, question_routes: str, kinds=("chunk", "window", "question")):
    """The embedding steps of a cold build (empty vector cache) over the bundled corpus's warehouse."""
    data = tmp_path / f"data-{question_routes}"
    shutil.copytree(warehouse, data / "warehouse")
    settings = Settings(data_dir=data, corpus_dir=CORPUS, embed_cache=tmp_path / f"cache-{question_routes}", question_routes=question_routes)
    ctx = BuildContext(settings)
    ctx._embedder = embedder = CountingEmbedder()
    per_kind: dict[str, int] = {}
    rows: dict[str, int] = {}
    for kind in kinds:
        results = [vectors_step(ctx, bucket, kind) for bucket in BUCKETS]
        per_kind[kind] = sum(r.extra["embedded_texts"] for r in results)
        rows[kind] = sum(r.table.num_rows for r in results)
        assert not any(r.warnings for r in results), [r.warnings for r in results]
    assert len(embedder.texts) == len(set(embedder.texts)) == sum(per_kind.values())  # never a text twice
    return per_kind, rows


@pytest.mark.slow  # reads the session's build of the bundled corpus
def test_a_cold_build_of_the_bundled_corpus_embeds_what_its_default_routes_read(built_corpus, tmp_path):
    data = built_corpus.data_dir
    chunks, windows = snapshot_rows(data, "chunks"), snapshot_rows(data, "chunk_windows")
    questions = snapshot_rows(data, "questions")
    read = {r["content_hash"] for r in chunks} | {r["content_hash"] for r in windows}
    assert questions and {q["content_hash"] for q in questions} - read  # questions would add texts

    per_kind, rows = _embed_cold(data / "warehouse", tmp_path, "model")
    assert sum(per_kind.values()) == len(read)
    assert per_kind["question"] == rows["question"] == 0
    assert rows == {"chunk": len(chunks), "window": len(windows), "question": 0}

    # the question routes turned on for the offline questions: their texts are embedded too
    per_kind, rows = _embed_cold(data / "warehouse", tmp_path, "always")
    assert per_kind["question"] == len({q["content_hash"] for q in questions} - read)
    assert rows["question"] == len(questions)


@pytest.mark.slow  # reads the session's build of the bundled corpus
def test_the_bundled_snapshot_has_no_question_vectors_and_serves(built_corpus, served_snapshot):
    manifest_tables = served_snapshot[0].manifest.vector_tables
    assert set(manifest_tables) == {"chunk_vectors", "window_vectors"}
    assert served_snapshot[0].manifest.version == current_version(built_corpus.data_dir)
    snapshot, embedder = served_snapshot
    assert QUESTION_VECTORS not in snapshot.recall.vectors
    result = search(snapshot.recall, "How do API keys work?", scope=Scope(), embedder=embedder)
    assert result.candidates
    assert not result.diagnostics.get("degraded"), result.diagnostics.get("degraded")
    # a search that asks for the question routes over offline questions runs without their vectors
    asked = search(snapshot.recall, "How do API keys work?", scope=Scope(), embedder=embedder, config=RecallConfig(question_routes="always"))
    assert asked.candidates and set(asked.diagnostics["degraded"]) == {routes.QUESTION_VECTOR}
