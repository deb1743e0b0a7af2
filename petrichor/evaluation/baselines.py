"""The naive baselines measured beside Petrichor in the same run.

All use fixed windows of 512 code points overlapping by 64 over each document's text (no titles, no
headings added): `naive_vector` ranks them by cosine similarity with the same embedder Petrichor uses,
`naive_bm25` by the project's BM25 with the bigram tokenizer over a single content field, and
`naive_hybrid` (`hybrid.py`) fuses a bm25s route with the same dense route. Window vectors go through the
build's embedding cache (keyed by fingerprint and text hash), so they are computed once across runs; query
vectors are computed once per run and shared by the baselines (`QueryEmbeddings`), each of which still
counts the embedding time in its latency.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from petrichor.evaluation.dataset import EvalDoc
from petrichor.evaluation.retrieval import SEARCH_LIMIT, Ranking, Retrieved
from petrichor_core.text.bm25 import BM25Index, top_ranked
from petrichor_core.text.markdown import headings
from petrichor_core.text.normalize import normalize_text, sha256_hex
from petrichor_core.text.tokenize import get_tokenizer

NAIVE_CHUNK_CHARS = 512
NAIVE_OVERLAP_CHARS = 64
EMBED_BATCH = 64


@dataclass(frozen=True)
class NaiveChunk:
    doc_id: str
    start: int
    end: int
    text: str
    heading_path: tuple[str, ...]
    """The Markdown heading path in force at the window's midpoint (empty for plain text)."""

    def retrieved(self) -> Retrieved:
        return Retrieved(self.doc_id, self.text, self.heading_path)


def _heading_marks(text: str) -> tuple[list[int], list[tuple[str, ...]]]:
    """Offsets where a heading line starts and the heading path from there on."""
    offsets: list[int] = [0]
    paths: list[tuple[str, ...]] = [()]
    stack: list[tuple[int, str]] = []
    for heading in headings(text):
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.title))
        offsets.append(heading.start)
        paths.append(tuple(t for _, t in stack))
    return offsets, paths


def naive_chunks(doc: EvalDoc, size: int = NAIVE_CHUNK_CHARS, overlap: int = NAIVE_OVERLAP_CHARS) -> list[NaiveChunk]:
    """Windows of `size` code points starting every `size - overlap`; the last one ends at the text's end."""
    text = normalize_text(doc.content).strip()
    if not text:
        return []
    offsets, paths = _heading_marks(text)
    step = size - overlap
    out: list[NaiveChunk] = []
    start = 0
    while True:
        end = min(len(text), start + size)
        path = paths[bisect.bisect_right(offsets, (start + end) // 2) - 1]
        out.append(NaiveChunk(doc.doc_id, start, end, text[start:end], path))
        if end >= len(text):
            return out
        start += step


def chunk_corpus(docs: Sequence[EvalDoc]) -> list[NaiveChunk]:
    return [c for d in docs for c in naive_chunks(d)]


def embed_chunks(
    chunks: Sequence[NaiveChunk],
    embedder: Any,
    cache_dir: Path,
    on_progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """A unit vector per chunk, from the embedding cache where present; new ones are added batch by batch,
    so an interrupted run keeps what it computed."""
    from petrichor_pipeline.builder.embedding_cache import EmbeddingCache

    cache = EmbeddingCache(cache_dir, embedder.fingerprint)
    hashes = [sha256_hex(c.text) for c in chunks]
    missing = list(dict.fromkeys(h for h in hashes if cache.get(h) is None))
    text_of = {h: c.text for h, c in zip(hashes, chunks)}
    for i in range(0, len(missing), EMBED_BATCH):
        part = missing[i : i + EMBED_BATCH]
        vectors = embedder.embed_passages([text_of[h] for h in part])
        cache.add({h: np.asarray(v, dtype=np.float32) for h, v in zip(part, vectors)})
        if on_progress:
            on_progress(min(i + EMBED_BATCH, len(missing)), len(missing))
    matrix = np.stack([cast(np.ndarray, cache.get(h)) for h in hashes]) if hashes else np.zeros((0, embedder.dim), np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)


class QueryEmbeddings:
    """Query vectors (the embedder's query mode) computed once per text, each with the time it took, so
    every baseline can count the embedding in its latency without embedding the same question again."""

    def __init__(self, embedder: Any):
        self.embedder = embedder
        self._memo: dict[str, tuple[np.ndarray, float]] = {}

    def get(self, text: str) -> tuple[np.ndarray, float]:
        """The unit query vector and the milliseconds its embedding took."""
        found = self._memo.get(text)
        if found is None:
            started = time.perf_counter()
            vector = np.asarray(self.embedder.embed_queries([text]), dtype=np.float32)[0]
            norm = float(np.linalg.norm(vector))
            found = self._memo[text] = (vector / norm if norm > 0 else vector, (time.perf_counter() - started) * 1000)
        return found


def top_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the `k` highest scores, best first; ties go to the lower index."""
    k = min(k, len(scores))
    if k <= 0:
        return np.empty(0, np.int64)
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.lexsort((top, -scores[top]))]


class NaiveVectorRetriever:
    """Exact top-k by cosine similarity over the window vectors (a brute-force matrix product)."""

    name = "naive_vector"

    def __init__(self, chunks: Sequence[NaiveChunk], vectors: np.ndarray, queries: QueryEmbeddings, limit: int = SEARCH_LIMIT):
        self.chunks = list(chunks)
        self.vectors = vectors
        self.queries = queries
        self.limit = limit

    def ranked(self, query: np.ndarray, k: int) -> np.ndarray:
        """Window indices of the `k` nearest windows, nearest first."""
        return top_indices(self.vectors @ query, k)

    def retrieve(self, question: str) -> Ranking:
        query, embed_ms = self.queries.get(question)
        started = time.perf_counter()
        items = [self.chunks[i].retrieved() for i in self.ranked(query, self.limit).tolist()]
        recall_ms = (time.perf_counter() - started) * 1000
        return Ranking(items, embed_ms + recall_ms, recall_ms)

    def all_chunks(self) -> list[Retrieved]:
        return [c.retrieved() for c in self.chunks]


class NaiveBM25Retriever:
    """The project's BM25 (bigram tokenizer) over the windows' text as one content field."""

    name = "naive_bm25"

    def __init__(self, chunks: Sequence[NaiveChunk], limit: int = SEARCH_LIMIT):
        self.chunks = list(chunks)
        self.tokenizer = get_tokenizer("bigram")
        self.index = BM25Index.build((("", "", c.text) for c in self.chunks), self.tokenizer.index)
        self.limit = limit

    def retrieve(self, question: str) -> Ranking:
        started = time.perf_counter()
        rows, scores = self.index.score(self.tokenizer.query(question))
        items = [self.chunks[r.row].retrieved() for r in top_ranked(rows, scores, self.limit)]
        latency = (time.perf_counter() - started) * 1000
        return Ranking(items, latency, latency)

    def all_chunks(self) -> list[Retrieved]:
        return [c.retrieved() for c in self.chunks]
