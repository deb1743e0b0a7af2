"""Vectors held in memory for exact, filtered nearest-neighbour search.

A snapshot's LanceDB table (checked out at its recorded version) is read once at load into one float32
matrix. A query is one matrix-vector product; the access mask is applied to the scores *before* the
top-k is taken, exactly like a LanceDB prefilter, but without a per-query scan setup: on this machine a
LanceDB flat search costs 3–5 ms even on a hundred rows and ~50 ms on 30,000, numpy ~8 ms. Tables larger
than `DENSE_MAX_ROWS` stay in LanceDB, where the pipeline builds an ANN index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

DENSE_MAX_ROWS = 200_000
"""About 300 MB of float32 at 384 dimensions; past this, LanceDB's ANN index serves the route."""


@dataclass(frozen=True)
class DenseVectors:
    matrix: np.ndarray
    """(n, dim) float32, L2-normalised rows."""
    rows: np.ndarray
    """For each vector, the row of the recall table it belongs to (chunks or questions); -1 if none."""
    ids: list[str]
    fingerprints: np.ndarray
    """Each vector's embedding fingerprint: a query is compared only with vectors of its own model."""

    @classmethod
    def from_lance(cls, table: Any, row_of: Mapping[str, int]) -> "DenseVectors":
        data = table.to_arrow()
        ids = data.column("id").to_pylist()
        vectors = data.column("vector")
        dim = vectors.type.list_size
        flat = vectors.combine_chunks().values.to_numpy(zero_copy_only=False)
        matrix = np.ascontiguousarray(flat.reshape(len(ids), dim), dtype=np.float32)
        return cls(
            matrix=matrix,
            rows=np.fromiter((row_of.get(i, -1) for i in ids), dtype=np.int64, count=len(ids)),
            ids=ids,
            fingerprints=np.asarray(data.column("fingerprint").to_pylist(), dtype=object),
        )

    def nearest(
        self, vector: np.ndarray, allowed_rows: np.ndarray, limit: int, fingerprint: str | None = None
    ) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the `limit` best vectors whose recall row `allowed_rows` allows."""
        if not len(self.ids):
            return []
        allowed = (self.rows >= 0) & allowed_rows[np.maximum(self.rows, 0)]
        if fingerprint:
            allowed &= self.fingerprints == fingerprint
        candidates = np.flatnonzero(allowed)
        if not len(candidates):
            return []
        query = np.asarray(vector, dtype=np.float32)
        if len(candidates) * 2 < len(self.ids):  # a narrow scope: score only its rows
            scores = self.matrix[candidates] @ query
        else:  # a wide scope: one product over the whole matrix is cheaper than gathering rows
            scores = (self.matrix @ query)[candidates]
        k = min(limit, len(candidates))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[candidates[i]], float(scores[i])) for i in top]


def maybe_dense(table: Any, row_of: Mapping[str, int]) -> Any:
    """A `DenseVectors` for tables small enough to hold in memory, else the LanceDB table itself."""
    if table is None or isinstance(table, DenseVectors):
        return table
    return DenseVectors.from_lance(table, row_of) if table.count_rows() <= DENSE_MAX_ROWS else table
