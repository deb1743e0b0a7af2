"""Vectors held for filtered nearest-neighbour search.

A snapshot with compact vector files (`contract.vectors.VECTOR_FILES`) is searched from them: the float32 matrix,
ordered by recall row, is memory-mapped (only the rows a search scores are read), and the 4-bit
product-quantisation index (faiss fast scan, 2 dimensions per code, a 16th of the matrix' bytes) built at
publish is read into memory. An older snapshot's LanceDB table (checked out at its recorded version) is
read once at load into one float32 matrix and quantised then.

A matrix-vector product is memory-bound: ~30 ms per 100,000 vectors of 384 dimensions on a 2-core
machine, too slow for the question table (3 per chunk). Tables of at least `ANN_MIN_ROWS` vectors
therefore search the quantised index for `RERANK_DEPTH` candidates, which are then scored exactly from the
matrix, so reported similarities are exact cosines and the top-k is exact unless a true neighbour's
quantised score falls below a few hundred others (rare even for random vectors, where quantisation does
worst).

The access mask always applies before the top-k: smaller tables and narrow scopes are scored exactly over
the allowed rows only; for wide scopes the index is searched deeper in proportion to the rows excluded and
excluded candidates are dropped before re-scoring, falling back to the exact search if too few remain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import faiss
import numpy as np
from threadpoolctl import threadpool_limits

from petrichor_core.contract.vectors import ANN_MIN_ROWS, VectorFiles, quantised_index
from petrichor_serving.recall.tables import rows_for

DENSE_MAX_ROWS = 2_000_000
"""About 3 GB of float32 at 384 dimensions: a LanceDB table past this (no compact files) serves the route itself."""
RERANK_DEPTH = 300
"""Quantised candidates re-scored exactly per query (at least 10 per requested neighbour)."""
Scans = dict[Any, np.ndarray]
"""One query vector's exact products, by table (`DenseVectors.products`), and its quantised rankings
(`DenseVectors.labels`)."""
ANN_MIN_SHARE = 0.2
"""Allowed share of the rows below which a scope is searched exactly (the index would need to go >5x deeper)."""
BLAS_THREADS = 1
"""Threads of the BLAS library behind numpy's products, for the whole process. Search's products are
matrix-vector ones, memory-bound, and OpenBLAS's idle workers spin for about 0.1 s after each: on 2 cores
that spin took the core the next query embedding needed (rgb_zh, 214 questions, search p50 25.5 → 17.3 ms,
window vector route 3.9 → 1.2 ms; the CPU a process burns in the 0.2 s after a search 103 → 0.1 ms)."""
threadpool_limits(BLAS_THREADS, user_api="blas")


def _one_thread() -> None:
    """faiss in this thread uses no OpenMP team: requests and the snapshot watcher already share the
    cores, and spinning team threads only slow them. The setting is per calling thread, hence per call."""
    faiss.omp_set_num_threads(1)


def _quantised(matrix: np.ndarray) -> Any:
    _one_thread()
    return quantised_index(matrix)


@dataclass(frozen=True)
class DenseVectors:
    matrix: np.ndarray
    """(n, dim) float32, L2-normalised rows, ordered by recall row; vectors of no recall row are dropped.
    Memory-mapped read-only when the snapshot has compact vector files."""
    rows: np.ndarray
    """For each vector, the row of the recall table it belongs to (chunks, windows or questions): what a
    search returns, so no vector needs an id string."""
    fingerprints: np.ndarray
    """int16 code of each vector's embedding fingerprint: a query is compared only with its own model's."""
    fingerprint_codes: dict[str, int]
    aligned: bool
    """Vector i belongs to recall row i, for every row: the access mask applies as it is."""
    ann: Any = None
    """The quantised index for tables of at least `ANN_MIN_ROWS` vectors, else None."""
    shared: SharedVectors | None = None
    """The vectors this table holds exactly as another table does (`share_identical`), scored from that
    table's product, or for a quantised table found through that table's quantised scan."""
    ranking_depth: int = 0
    """The least depth its quantised index is searched to (`labels`): set when another table finds its shared
    vectors through this ranking, deep enough for that table's unrestricted search."""
    identical: tuple[str, np.ndarray] | None = None
    """Recorded at publish for a quantised table (`contract.vectors.IDENTICAL_SOURCES`): the other table and,
    per vector, the index of the same vector there (-1: none)."""
    _centroids: dict[str, tuple[np.ndarray, int] | None] = field(default_factory=dict, compare=False, repr=False)

    def centroid(self, fingerprint: str) -> tuple[np.ndarray, int] | None:
        """The mean of the table's vectors made with `fingerprint` and how many there are (None: none): a
        query's dot product with it is its mean cosine over the whole table. Computed once per loaded table."""
        if fingerprint not in self._centroids:
            code = self.fingerprint_codes.get(fingerprint)
            found = None
            if code is not None and len(self.matrix):
                matrix = np.asarray(self.matrix, dtype=np.float32)
                if len(self.fingerprint_codes) > 1:
                    matrix = matrix[self.fingerprints == code]
                if len(matrix):
                    found = (matrix.mean(axis=0), len(matrix))
            self._centroids[fingerprint] = found
        return self._centroids[fingerprint]

    @classmethod
    def from_lance(cls, table: Any, row_of: Mapping[str, int]) -> DenseVectors:
        data = table.to_arrow()
        ids = data.column("id").to_pylist()
        rows = rows_for(row_of, ids)
        order = np.argsort(rows, kind="stable")
        order = order[rows[order] >= 0]
        vectors = data.column("vector")
        dim = vectors.type.list_size
        flat = vectors.combine_chunks().values.to_numpy(zero_copy_only=False).reshape(len(ids), dim)
        matrix = np.ascontiguousarray(flat[order], dtype=np.float32)
        fingerprint = data.column("fingerprint").combine_chunks().dictionary_encode()
        codes = fingerprint.indices.to_numpy(zero_copy_only=False).astype(np.int16)[order]
        return cls(
            matrix=matrix,
            rows=rows[order],
            fingerprints=codes,
            fingerprint_codes={fp: i for i, fp in enumerate(fingerprint.dictionary.to_pylist())},
            aligned=np.array_equal(rows[order], np.arange(len(rows))) and len(order) == len(row_of),
            ann=_quantised(matrix) if len(order) >= ANN_MIN_ROWS else None,
        )

    @classmethod
    def from_files(cls, files: VectorFiles, row_of: Mapping[str, int]) -> DenseVectors:
        """From a snapshot's verified compact files: nothing is parsed or copied but the rows and the
        quantised index. `row_of` maps the recall table's ids to its rows, in row order."""
        rows = files.rows.astype(np.int64)
        n = len(row_of)
        if len(rows) and (rows.min() < 0 or rows.max() >= n or np.any(np.diff(rows) <= 0)):
            raise ValueError(f"vector files of {files.name}: rows out of order or beyond the {n} rows of their table")
        ann = None
        if files.ann_path is not None:
            _one_thread()
            ann = faiss.read_index(str(files.ann_path))
            if ann.ntotal != len(rows):
                raise ValueError(f"vector files of {files.name}: the quantised index holds {ann.ntotal} vectors, not {len(rows)}")
        fingerprint = files.fingerprint or ""
        return cls(
            matrix=np.asarray(files.matrix),
            rows=rows,
            fingerprints=np.zeros(len(rows), dtype=np.int16),
            fingerprint_codes={fingerprint: 0},
            aligned=len(rows) == n and (n == 0 or int(rows[-1]) == n - 1),
            ann=ann,
            identical=files.identical,
        )

    def _allowed(self, allowed_rows: np.ndarray, fingerprint: str | None) -> np.ndarray | None:
        """Which vectors may be returned; None when every one may (the common, unrestricted case)."""
        n = len(self.rows)
        allowed = allowed_rows if self.aligned else allowed_rows[self.rows]
        if fingerprint:
            code = self.fingerprint_codes.get(fingerprint)
            if code is None:
                return np.zeros(n, dtype=bool)
            if len(self.fingerprint_codes) > 1:
                allowed = allowed & (self.fingerprints == code)
        return None if np.count_nonzero(allowed) == n else allowed

    def nearest(
        self, vector: np.ndarray, allowed_rows: np.ndarray, limit: int, fingerprint: str | None = None, scans: Scans | None = None
    ) -> list[tuple[int, float]]:
        """(recall row, cosine similarity) of the `limit` best vectors whose recall row `allowed_rows` allows;
        `scans` keeps the exact products of one query vector for the other tables searched with it."""
        if not len(self.rows) or limit <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        allowed = self._allowed(allowed_rows, fingerprint)
        share = 1.0 if allowed is None else np.count_nonzero(allowed) / len(self.rows)
        found = None
        if self.ann is not None and share >= ANN_MIN_SHARE:
            found = self._approximate(query, allowed, share, limit, scans)
        if found is None:
            found = self._exact(query, allowed, scans)
        candidates, scores = found
        k = min(limit, len(candidates))
        if k == 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((candidates[top], -scores[top]))]  # ties by row order, as an exact scan
        return list(zip(self.rows[candidates[top]].tolist(), scores[top].tolist()))

    def _exact(self, query: np.ndarray, allowed: np.ndarray | None, scans: Scans | None) -> tuple[np.ndarray, np.ndarray]:
        if allowed is None:
            return np.arange(len(self.rows)), self.products(query, scans)
        candidates = np.flatnonzero(allowed)
        if len(candidates) * 2 < len(self.rows):  # a narrow scope: score only its rows
            return candidates, self.matrix[candidates] @ query
        return candidates, self.products(query, scans)[candidates]  # one product beats gathering most rows

    def products(self, query: np.ndarray, scans: Scans | None = None) -> np.ndarray:
        """The query's cosine with every vector of the table, computed once per query in `scans` (shared by
        the routes of one query); vectors another table also holds take that table's product."""
        scans = {} if scans is None else scans
        found = scans.get(id(self))
        if found is None:
            shared = self.shared
            if shared is None:
                found = self.matrix @ query
            else:
                found = np.empty(len(self.rows), dtype=np.float32)
                found[shared.own] = shared.source.products(query, scans)[shared.theirs]
                found[shared.rest] = shared.rest_matrix @ query
            scans[id(self)] = found
        return found

    def _approximate(
        self, query: np.ndarray, allowed: np.ndarray | None, share: float, limit: int, scans: Scans | None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Quantised candidates, the excluded ones dropped, scored exactly; None if too few remain."""
        if self.shared is not None and self.shared.mine is not None:
            found = self._through_source(query, allowed, share, limit, scans)
            if found is not None:
                return found
        depth = min(len(self.rows), math.ceil(max(RERANK_DEPTH, 10 * limit) / share))
        candidates = self.labels(query, depth, scans)
        if allowed is not None:
            candidates = candidates[allowed[candidates]]
            if len(candidates) < min(limit, int(np.count_nonzero(allowed))):
                return None
        return candidates, self.matrix[candidates] @ query

    def labels(self, query: np.ndarray, depth: int, scans: Scans | None = None) -> np.ndarray:
        """The `depth` vectors the quantised index ranks first for `query`, best first, whatever the access
        mask; kept in `scans` so that a table sharing these vectors reads them rather than scanning again."""
        key = ("labels", id(self))
        kept = None if scans is None else scans.get(key)
        if kept is None or len(kept) < depth:
            _one_thread()
            _, found = self.ann.search(query.reshape(1, -1), min(len(self.rows), max(depth, self.ranking_depth)))
            kept = found[0][found[0] >= 0]
            if scans is not None:
                scans[key] = kept
        return kept[:depth]

    def _through_source(
        self, query: np.ndarray, allowed: np.ndarray | None, share: float, limit: int, scans: Scans | None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The shared vectors' candidates from the source's quantised ranking (searched deeper by the share of
        its vectors this table holds), the few others scored exactly; None if too few remain."""
        shared = self.shared
        assert shared is not None and shared.mine is not None  # `_approximate` calls it only then
        source_rows = len(shared.source.rows)
        held = share * len(shared.own) / source_rows
        if held < ANN_MIN_SHARE:
            return None
        depth = min(source_rows, math.ceil(max(RERANK_DEPTH, 10 * limit) / held))
        candidates = shared.mine[shared.source.labels(query, depth, scans)]
        candidates = candidates[candidates >= 0]
        rest, rest_matrix = shared.rest, shared.rest_matrix
        if allowed is not None:
            candidates = candidates[allowed[candidates]]
            kept = allowed[rest]
            rest, rest_matrix = rest[kept], rest_matrix[kept]
            if len(candidates) + len(rest) < min(limit, int(np.count_nonzero(allowed))):
                return None
        elif len(candidates) + len(rest) < min(limit, len(self.rows)):
            return None
        scores = np.concatenate([self.matrix[candidates] @ query, rest_matrix @ query])
        return np.concatenate([candidates, rest]), scores


@dataclass(frozen=True)
class SharedVectors:
    """Which vectors of a table are, bit for bit, vectors of `source` (`own[i]` is `source`'s `theirs[i]`),
    and the table's other vectors (`rest`, copied contiguous into `rest_matrix`)."""

    source: DenseVectors
    own: np.ndarray
    theirs: np.ndarray
    rest: np.ndarray
    rest_matrix: np.ndarray
    mine: np.ndarray | None = None
    """For a quantised table: per vector of `source`, the index of the same vector here (-1: none)."""


def share_identical(tables: Mapping[str, Any]) -> dict[str, Any]:
    """`tables` with each exactly scanned table (no quantised index, one embedding model) scoring the vectors
    it shares with an earlier such table from that table's product: a chunk of one window has its window's
    text, hence the same vector, and a query need not be multiplied with it twice (rgb_zh: 4,154 of its
    4,170 chunks; cmrc2018_zh 458 of 848; multihop_rag_en 312 of 326; rhdh_docs_en 58 of 579). Search
    results are unchanged: the shared rows are compared byte for byte at load. A quantised table shares
    through its source's quantised ranking what the publish recorded (`_share_recorded`)."""
    out: dict[str, Any] = dict(tables)
    sources: list[tuple[DenseVectors, dict[bytes, int]]] = []
    for name, table in tables.items():
        if not isinstance(table, DenseVectors) or table.ann is not None or len(table.fingerprint_codes) != 1 or not len(table.rows):
            continue
        matrix = np.ascontiguousarray(table.matrix, dtype=np.float32)
        for source, seen in sources:
            if source.fingerprint_codes.keys() != table.fingerprint_codes.keys() or source.matrix.shape[1] != matrix.shape[1]:
                continue
            theirs = np.fromiter((seen.get(row.tobytes(), -1) for row in matrix), dtype=np.int64, count=len(matrix))
            own = np.flatnonzero(theirs >= 0)
            if len(own):
                rest = np.flatnonzero(theirs < 0)
                shared = SharedVectors(source, own, theirs[own], rest, np.ascontiguousarray(matrix[rest]))
                out[name] = table = replace(table, shared=shared)
                break
        sources.append((table, {row.tobytes(): i for i, row in enumerate(matrix)}))
    for name, table in tables.items():
        if isinstance(table, DenseVectors) and table.ann is not None and table.identical is not None:
            _share_recorded(out, name, table)
    return out


def _share_recorded(out: dict[str, Any], name: str, table: DenseVectors) -> None:
    """Let quantised table `name` reach the vectors its source also holds (recorded at publish) through the
    source's quantised ranking, searched deep enough for both: worth it when the source is quantised too,
    holds at least `ANN_MIN_SHARE` of its vectors as this table's, and the rest is small enough to score
    exactly on every query (below `ANN_MIN_ROWS`). Else the table scans its own index. With 1,000,000
    one-window chunks the chunk route no longer scans a second million codes."""
    assert table.identical is not None  # `share_identical` calls it only then
    source_name, found = table.identical
    source = out.get(source_name)
    if not isinstance(source, DenseVectors) or source.ann is None or source.fingerprint_codes.keys() != table.fingerprint_codes.keys():
        return
    if len(found) and found.max() >= len(source.rows):
        raise ValueError(f"identical-vector file: index {int(found.max())} beyond the {len(source.rows)} vectors of {source_name}")
    own = np.flatnonzero(found >= 0)
    own = own[np.unique(found[own], return_index=True)[1]]  # vectors held twice here: the first through the source
    rest = np.setdiff1d(np.arange(len(found)), own)
    if len(rest) >= ANN_MIN_ROWS or len(own) < ANN_MIN_SHARE * len(source.rows):
        return
    depth = math.ceil(RERANK_DEPTH * len(source.rows) / len(own))
    out[source_name] = source = replace(source, ranking_depth=max(source.ranking_depth, depth))
    mine = np.full(len(source.rows), -1, dtype=np.int64)
    mine[found[own]] = own
    shared = SharedVectors(source, own, found[own].astype(np.int64), rest, np.ascontiguousarray(table.matrix[rest]), mine)
    out[name] = replace(table, shared=shared)


def maybe_dense(table: Any, row_of: Mapping[str, int]) -> Any:
    """A `DenseVectors` for compact vector files and for LanceDB tables that fit in memory, else the
    LanceDB table itself."""
    if table is None or isinstance(table, DenseVectors):
        return table
    if isinstance(table, VectorFiles):
        return DenseVectors.from_files(table, row_of)
    return DenseVectors.from_lance(table, row_of) if table.count_rows() <= DENSE_MAX_ROWS else table
