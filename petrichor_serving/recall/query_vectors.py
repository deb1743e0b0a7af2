"""Query embeddings, cached per (embedder fingerprint, text).

A search embeds its original question and rewritten clauses in one call; agents often repeat a question or
a clause, so a small LRU spares the endpoint round trip. Keys are single texts, never a whole batch.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from petrichor_core.models.protocols import Embedder


class QueryVectorCache:
    def __init__(self, size: int = 512):
        self._size = size
        self._items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, embedder: Embedder, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """A vector per text; the texts not cached go to `embed_queries` in a single call."""
        fingerprint = embedder.fingerprint
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for text in texts:
                vector = self._items.get((fingerprint, text))
                if vector is not None:
                    self._items.move_to_end((fingerprint, text))
                    out[text] = vector
        missing = list(dict.fromkeys(t for t in texts if t not in out))
        if missing:
            vectors = np.asarray(embedder.embed_queries(missing), dtype=np.float32)
            if vectors.ndim != 2 or len(vectors) != len(missing):
                raise ValueError(f"embedder returned {vectors.shape} for {len(missing)} queries")
            with self._lock:
                for text, vector in zip(missing, vectors):
                    out[text] = vector
                    self._items[(fingerprint, text)] = vector
                    self._items.move_to_end((fingerprint, text))
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
        return out

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


QUERY_VECTORS = QueryVectorCache()
