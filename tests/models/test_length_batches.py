"""Embedding in batches of similar length: each distinct text once, the vectors back in the callers' order."""

from __future__ import annotations

import numpy as np

from petrichor_core.config import BuildLimits, ModelEndpoint
from petrichor_core.models.embedding import OpenAIEmbedder, embed_by_length, length_batches

from .fake_openai import EMBEDDINGS, FakeOpenAI, embedding_reply


def test_batches_group_similar_lengths_shortest_first_and_keep_ties_in_order():
    texts = ["ccc", "a", "bbbbb", "dd", "e", "ffff"]
    assert length_batches(texts, 2) == [[1, 4], [3, 0], [5, 2]]
    assert length_batches([], 4) == []


def test_each_distinct_text_is_embedded_once_and_the_vectors_come_back_in_order():
    sent: list[list[str]] = []

    def embed(batch: list[str]) -> np.ndarray:
        sent.append(list(batch))
        return np.asarray([[len(t), ord(t[0])] for t in batch], dtype=np.float32)

    texts = ["long text here", "a", "mid text", "a", "long text here", "bb"]
    vectors = embed_by_length(embed, texts, batch_size=2)
    assert sent == [["a", "bb"], ["mid text", "long text here"]]
    assert [tuple(v) for v in vectors] == [(len(t), ord(t[0])) for t in texts]


def test_an_endpoint_embedder_sends_sorted_distinct_texts_and_returns_them_in_order(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(EMBEDDINGS, embedding_reply([[1.0, 0.0], [0.0, 1.0]]), embedding_reply([[1.0, 1.0]]))
    endpoint = ModelEndpoint(base_url=fake_openai.base_url, model="test-embed", timeout_s=5.0, max_retries=0)
    one_at_a_time = BuildLimits(embed_concurrency=1)  # the scripted replies go back in arrival order
    vectors = OpenAIEmbedder(endpoint, batch_size=2, limits=one_at_a_time).embed_passages(["a longer one", "x", "a longer one", "yy"])
    assert [c["input"] for c in fake_openai.calls(EMBEDDINGS)] == [["x", "yy"], ["a longer one"]]
    s = np.sqrt(0.5)
    np.testing.assert_allclose(vectors, [[s, s], [1.0, 0.0], [s, s], [0.0, 1.0]], rtol=1e-6)
