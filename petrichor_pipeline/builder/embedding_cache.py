"""Vectors on disk by (embedding fingerprint, content hash), so no text is embedded twice across builds.

Several data dirs may share one cache folder (`PETRICHOR_EMBED_CACHE`); segments are append-only, so
concurrent writers never clash. An instance reads the segments once; a build run holds one per fingerprint.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from petrichor_core.contract.files import write_parquet_atomic


class EmbeddingCache:
    """Append-only Parquet segments of (content_hash, vector) per fingerprint, shared by every bucket."""

    def __init__(self, root: Path, fingerprint: str):
        safe = hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
        self.dir = root / safe
        self._vectors: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()

    def _load(self) -> dict[str, np.ndarray]:
        if self._vectors is None or not self.dir.exists():
            vectors: dict[str, np.ndarray] = {}
            for seg in sorted(self.dir.glob("*.parquet")):
                try:
                    t = pq.read_table(seg)
                except OSError:
                    continue
                mat = np.asarray(t.column("vector").to_pylist(), dtype=np.float32)
                for h, v in zip(t.column("content_hash").to_pylist(), mat):
                    vectors[h] = v
            self._vectors = vectors
        return self._vectors

    def get(self, content_hash: str) -> np.ndarray | None:
        return self._load().get(content_hash)

    def add(self, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        with self._lock:
            self._load().update(items)
            hashes = list(items)
            table = pa.table({"content_hash": hashes, "vector": pa.array([items[h].tolist() for h in hashes], pa.list_(pa.float32()))})
            write_parquet_atomic(table, self.dir / f"{time.time_ns()}-{uuid.uuid4().hex[:8]}.parquet")
