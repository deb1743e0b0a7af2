"""The endpoint embedder at scale: batches in flight at once up to `embed_concurrency` (shared by every
thread that calls it), retries that ride out 503s and timeouts, a `ModelError` with nothing returned once
they are spent, and the query/passage marking (`PETRICHOR_EMBED_INPUT_TYPE`) read from settings."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from petrichor_core.config import BuildLimits, ModelEndpoint, load_settings
from petrichor_core.models.embedding import OpenAIEmbedder
from petrichor_core.models.protocols import ModelError
from petrichor_core.models.providers import make_embedder

from .fake_openai import EMBEDDINGS, FakeOpenAI, Reply, embedding_reply, error_reply


def vector_of(text: str) -> list[float]:
    """What the fake endpoint answers for `text`: a function of the text alone, whatever the order."""
    return [float(len(text)), float(ord(text[0])), 1.0]


def expected(texts: list[str]) -> np.ndarray:
    rows = np.asarray([vector_of(t) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def answer_from_input(server: FakeOpenAI, delay_s: float = 0.0, fail: dict | None = None) -> Counter:
    """Answer every embeddings request from its inputs; `fail` maps a batch's first text to the replies its
    first attempts get instead. Returns the attempts per batch (keyed by its first text)."""
    attempts: Counter = Counter()

    def gate(path: str, body: dict) -> Reply | None:
        texts = body["input"]
        attempts[texts[0]] += 1
        scripted = (fail or {}).get(texts[0], [])
        if attempts[texts[0]] <= len(scripted):
            return scripted[attempts[texts[0]] - 1]
        return embedding_reply([vector_of(t) for t in texts], delay_s=delay_s)

    server.gate = gate
    return attempts


def embedder_for(server: FakeOpenAI, concurrency: int, *, max_retries: int = 3, timeout_s: float = 5.0, **kw) -> OpenAIEmbedder:
    config = ModelEndpoint(base_url=server.base_url, model="test-embed", timeout_s=timeout_s, max_retries=max_retries)
    return OpenAIEmbedder(config, batch_size=2, limits=BuildLimits(embed_concurrency=concurrency), backoff_base_s=0.01, **kw)


TEXTS = [f"text number {i}" + "x" * (i % 5) for i in range(24)]


def test_batches_go_out_at_once_up_to_the_limit_and_come_back_in_order(fake_openai: FakeOpenAI) -> None:
    attempts = answer_from_input(fake_openai, delay_s=0.05)
    embedder = embedder_for(fake_openai, concurrency=3)
    vectors = embedder.embed_passages(TEXTS)
    np.testing.assert_allclose(vectors, expected(TEXTS), rtol=1e-6)
    assert sum(attempts.values()) == 12  # 24 texts in batches of 2
    assert fake_openai.peak_in_flight == 3


def test_callers_on_several_threads_share_the_limit(fake_openai: FakeOpenAI) -> None:
    """The buckets of a step call one embedder from several threads: together they stay within its limit."""
    answer_from_input(fake_openai, delay_s=0.03)
    embedder = embedder_for(fake_openai, concurrency=4)
    results: dict[int, np.ndarray] = {}
    parts = [TEXTS[i::3] for i in range(3)]

    def call(i: int) -> None:
        results[i] = embedder.embed_passages(parts[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, part in enumerate(parts):
        np.testing.assert_allclose(results[i], expected(part), rtol=1e-6)
    assert 1 < fake_openai.peak_in_flight <= 4


def test_retries_recover_from_503s_and_timeouts(fake_openai: FakeOpenAI) -> None:
    first = sorted(TEXTS, key=len)  # the batches' first texts, shortest first like `length_batches`
    busy = error_reply(503, "overloaded")
    slow = embedding_reply([[1.0, 0.0, 0.0]], delay_s=1.0)  # past the client's timeout
    fail = {first[0]: [busy, busy], first[2]: [error_reply(429)], first[4]: [slow]}
    attempts = answer_from_input(fake_openai, fail=fail)
    vectors = embedder_for(fake_openai, concurrency=3, timeout_s=0.3).embed_passages(TEXTS)
    np.testing.assert_allclose(vectors, expected(TEXTS), rtol=1e-6)
    assert attempts[first[0]] == 3 and attempts[first[2]] == 2 and attempts[first[4]] == 2


def test_spent_retries_are_a_model_error_and_no_vectors_come_back(fake_openai: FakeOpenAI) -> None:
    first = sorted(TEXTS, key=len)
    attempts = answer_from_input(fake_openai, fail={first[6]: [error_reply(503)] * 10})
    embedder = embedder_for(fake_openai, concurrency=3, max_retries=2)
    with pytest.raises(ModelError, match=r"HTTP 503.*after 3 attempts"):
        embedder.embed_passages(TEXTS)
    assert attempts[first[6]] == 3


def test_a_reply_of_another_dimension_fails_the_whole_call(fake_openai: FakeOpenAI) -> None:
    first = sorted(TEXTS, key=len)
    answer_from_input(fake_openai, fail={first[8]: [embedding_reply([[1.0, 0.0], [0.0, 1.0]])]})
    with pytest.raises(ModelError, match="dimension"):
        embedder_for(fake_openai, concurrency=3, expected_dim=3).embed_passages(TEXTS)


def embedder_for_dim(server: FakeOpenAI, **endpoint) -> OpenAIEmbedder:
    config = ModelEndpoint(base_url=server.base_url, model="test-embed", timeout_s=5.0, max_retries=0, **endpoint)
    return OpenAIEmbedder(config, limits=BuildLimits(embed_concurrency=1), expected_dim=3)


def test_the_input_type_marks_queries_and_passages(fake_openai: FakeOpenAI) -> None:
    answer_from_input(fake_openai)
    plain, field, prefix = (embedder_for_dim(fake_openai, input_type=mode) for mode in ("", "field", "prefix"))
    for embedder in (plain, field, prefix):
        embedder.embed_queries(["q"])
        embedder.embed_passages(["p"])
    sent = [(body["input"], body.get("input_type")) for body in fake_openai.calls(EMBEDDINGS)]
    assert sent == [
        (["q"], None),
        (["p"], None),
        (["q"], "query"),
        (["p"], "passage"),
        (["query: q"], None),
        (["passage: p"], None),
    ]
    assert plain.fingerprint == "test-embed:3:v1"  # unchanged for the default
    assert len({plain.fingerprint, field.fingerprint, prefix.fingerprint}) == 3


def test_the_endpoint_settings_come_from_the_environment(fake_openai: FakeOpenAI, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PETRICHOR_DATA", str(tmp_path))
    monkeypatch.setenv("PETRICHOR_EMBED_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("PETRICHOR_EMBED_MODEL", "e5")
    monkeypatch.setenv("PETRICHOR_EMBED_CONCURRENCY", "5")
    monkeypatch.setenv("PETRICHOR_EMBED_INPUT_TYPE", "field")
    settings = load_settings()
    assert settings.limits.embed_concurrency == 5 and settings.embed.input_type == "field"
    embedder = make_embedder(settings)
    assert isinstance(embedder, OpenAIEmbedder)
    assert (embedder.concurrency, embedder.input_type, embedder.batch_size) == (5, "field", settings.limits.embed_batch_size)
    monkeypatch.setenv("PETRICHOR_EMBED_INPUT_TYPE", "sideways")
    with pytest.raises(ValueError, match="PETRICHOR_EMBED_INPUT_TYPE"):
        load_settings()
    monkeypatch.delenv("PETRICHOR_EMBED_INPUT_TYPE")
    monkeypatch.delenv("PETRICHOR_EMBED_CONCURRENCY")
    assert load_settings().limits.embed_concurrency == BuildLimits().embed_concurrency == 8
    assert load_settings().embed.input_type == ""
