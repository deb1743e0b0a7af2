"""Vector tables: LanceDB reads at the manifest's versions, the row digest that pins them, and the compact
files serving memory-maps instead (the float32 matrix, each vector's row, the trained 4-bit quantiser).

The digest and the compact files are what make a vector table part of a verified snapshot: LanceDB keeps
every version, and the manifest names one and the sha256 of its rows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from petrichor_core.contract.files import load_npy, save_npy
from petrichor_core.contract.manifest import IntegrityError, verified, write_entry

_VECTOR_KEYS = ("id", "article_id", "kb_id", "tenant", "content_hash", "fingerprint")


def vector_digest(table: pa.Table) -> str:
    """sha256 over a vector table's rows in the order LanceDB returns them for one version (a fixed order).

    Hashes Arrow buffers (value lengths, then bytes) rather than values one by one, so the cost is a pass
    over the bytes; the publisher computes it from the table read back at the version it records.
    """
    import numpy as np

    t = table
    digest = hashlib.sha256()
    for name in _VECTOR_KEYS:
        col = pc.fill_null(t.column(name).cast(pa.string()), "").combine_chunks()
        offsets = np.frombuffer(col.buffers()[1], dtype=np.int32)[col.offset : col.offset + len(col) + 1]
        digest.update(np.diff(offsets).astype("<i4").tobytes())
        digest.update(col.buffers()[2].to_pybytes()[offsets[0] : offsets[-1]] if len(col) else b"")
    vectors = t.column("vector").combine_chunks()
    digest.update(np.ascontiguousarray(pc.list_flatten(vectors).to_numpy(zero_copy_only=False), dtype="<f4").data)
    return digest.hexdigest()


def _checked_out(lance_dir: Path, info: dict[str, Any]) -> tuple[Any, pa.Table]:
    """The LanceDB table at the manifest's version and its rows."""
    import lancedb

    try:
        tbl = lancedb.connect(str(lance_dir)).open_table(info["table"])
        tbl.checkout(int(info["version"]))
        return tbl, tbl.to_arrow()
    except Exception as exc:  # a missing table or version, or unreadable files
        raise IntegrityError(f"vector table {info['table']} v{info['version']}: cannot be read ({type(exc).__name__})") from exc


def read_vector_rows(lance_dir: Path, info: dict[str, Any]) -> pa.Table:
    """The rows of a vector table at the manifest's version (what `write_vector_files` stores compactly)."""
    return _checked_out(lance_dir, info)[1]


def open_vector_table(lance_dir: Path, info: dict[str, Any]) -> Any:
    """The LanceDB table checked out at the manifest's version, its rows verified against the recorded digest."""
    tbl, rows = _checked_out(lance_dir, info)
    if rows.num_rows != int(info["rows"]):
        raise IntegrityError(f"vector table {info['table']} v{info['version']}: {rows.num_rows} rows, the manifest records {info['rows']}")
    if "sha256" in info and vector_digest(rows) != info["sha256"]:
        raise IntegrityError(f"vector table {info['table']} v{info['version']}: rows differ from the manifest's digest")
    return tbl


# --------------------------------------------------------------------------------- compact vector files

ANN_MIN_ROWS = 10_000
"""Vector tables of at least this many rows also get a quantised index file; below, an exact product over
the allowed rows costs under 2 ms (the quantised search about 0.5)."""
TRAIN_ROWS = 20_000
"""Rows the quantiser is trained on, evenly spaced: plenty for 16 centroids per 2-dimensional slice."""
TRAIN_ITERATIONS = 10
"""k-means passes per slice: 16 centroids in 2 dimensions settle early (faiss' default of 25 doubles the time)."""
VECTOR_FILES = {"matrix": "{name}.f32.npy", "rows": "{name}.rows.npy", "ann": "{name}.pq.faiss", "identical": "{name}.identical.npy"}
"""The compact files of one vector table in the snapshot folder: the float32 matrix ordered by the rows of
the table it embeds (`VECTOR_TABLES`), each vector's row there (int32), the 4-bit product-quantisation
index of the matrix (tables of at least `ANN_MIN_ROWS` vectors), and for a quantised table of
`IDENTICAL_SOURCES` which of its vectors that source holds bit for bit (int32, -1 for none). Serving
memory-maps the matrix and reads the index, so loading costs a checksum pass instead of parsing every vector."""
IDENTICAL_SOURCES = {"chunk_vectors": "window_vectors"}
"""Vector table -> the table most of its vectors may also be in: a chunk of one window embeds its window's
text, hence the same vector (4,154 of rgb_zh's 4,170 chunks, 312 of multihop_rag_en's 326). A quantised
table records them (`write_identical_file`) so that serving finds them through the source's quantised scan
instead of scanning them twice; exactly scanned tables compare their bytes at load."""
_HASH_BLOCK = 16_384
"""Rows hashed at a time by `identical_rows` (about 50 MB of uint64 at 384 dimensions)."""


def quantised_index(matrix: Any) -> Any:
    """A trained 4-bit product-quantisation fast-scan index of `matrix` (inner product, 2 dimensions per code)."""
    import faiss
    import numpy as np

    faiss.omp_set_num_threads(1)
    dim = matrix.shape[1]
    index = faiss.IndexPQFastScan(dim, dim // 2 if dim % 2 == 0 else dim, 4, faiss.METRIC_INNER_PRODUCT)
    index.pq.cp.niter = TRAIN_ITERATIONS
    step = max(1, len(matrix) // TRAIN_ROWS)
    index.train(np.ascontiguousarray(matrix[::step][:TRAIN_ROWS]))
    index.add(matrix)
    return index


def write_vector_files(folder: Path, name: str, rows: pa.Table, info: dict[str, Any], source_ids: list[str]) -> dict[str, Any] | None:
    """Store a vector table's rows (`read_vector_rows` at `info`'s version) as the compact files of
    `VECTOR_FILES` in the snapshot folder; the manifest entry, or None when the rows mix fingerprints
    (then serving reads the LanceDB table). `source_ids` are the ids of the embedded table, in its order;
    vectors of no row there are left out."""
    import numpy as np

    fingerprints = pc.unique(rows.column("fingerprint")).to_pylist()
    if len(fingerprints) > 1:
        return None
    row_of = {i: r for r, i in enumerate(source_ids)}
    at = np.fromiter((row_of.get(i, -1) for i in rows.column("id").to_pylist()), dtype=np.int64, count=rows.num_rows)
    order = np.argsort(at, kind="stable")
    order = order[at[order] >= 0]
    vectors = rows.column("vector").combine_chunks()
    dim = vectors.type.list_size
    flat = vectors.values.to_numpy(zero_copy_only=False).reshape(rows.num_rows, dim)
    matrix = np.ascontiguousarray(flat[order], dtype=np.float32)
    paths = {kind: folder / pattern.format(name=name) for kind, pattern in VECTOR_FILES.items()}
    files = {
        "matrix": write_entry(paths["matrix"], lambda tmp: save_npy(tmp, matrix)),
        "rows": write_entry(paths["rows"], lambda tmp: save_npy(tmp, at[order].astype(np.int32))),
    }
    if len(matrix) >= ANN_MIN_ROWS:
        import faiss

        index = quantised_index(matrix)
        files["ann"] = write_entry(paths["ann"], lambda tmp: faiss.write_index(index, tmp))
    return {
        "files": files,
        "count": len(matrix),
        "dim": dim,
        "fingerprint": fingerprints[0] if fingerprints else None,
        "table_version": info["version"],
        "table_rows": info["rows"],
        "table_sha256": info["sha256"],
    }


def identical_rows(matrix: Any, source: Any) -> Any:
    """For each row of `matrix`, the index of a row of `source` equal to it bit for bit, else -1 (int32).

    Rows are matched by a 64-bit hash of their bits and every match is then compared whole, so a hash
    collision can only leave a row unmatched, never pair two different vectors."""
    import numpy as np

    if not len(matrix) or not len(source) or matrix.shape[1] != source.shape[1]:
        return np.full(len(matrix), -1, dtype=np.int32)
    weights = np.random.default_rng(0x5EED).integers(1, 2**63, size=matrix.shape[1], dtype=np.uint64) | np.uint64(1)

    def bits(rows: Any) -> Any:
        return np.ascontiguousarray(rows, dtype=np.float32).view(np.uint32)

    def hashes(m: Any) -> Any:
        out = np.empty(len(m), dtype=np.uint64)
        for at in range(0, len(m), _HASH_BLOCK):
            block = bits(m[at : at + _HASH_BLOCK]).astype(np.uint64)
            with np.errstate(over="ignore"):
                out[at : at + len(block)] = (block * weights).sum(axis=1, dtype=np.uint64)
        return out

    theirs = hashes(source)
    order = np.argsort(theirs, kind="stable")
    sorted_hashes = theirs[order]
    found = np.full(len(matrix), -1, dtype=np.int32)
    for at in range(0, len(matrix), _HASH_BLOCK):
        mine = hashes(matrix[at : at + _HASH_BLOCK])
        pos = np.minimum(np.searchsorted(sorted_hashes, mine), len(order) - 1)
        hit = np.flatnonzero(sorted_hashes[pos] == mine)
        if not len(hit):
            continue
        candidates = order[pos[hit]]
        same = np.all(bits(matrix[at + hit]) == bits(source[candidates]), axis=1)
        found[at + hit[same]] = candidates[same]
    return found


def write_identical_file(folder: Path, name: str, source: str, compact: dict[str, Any], source_compact: dict[str, Any]) -> dict[str, Any] | None:
    """Record in the snapshot folder which vectors of quantised table `name` its `IDENTICAL_SOURCES` table
    `source` holds bit for bit (`identical_rows` over the two matrices already written); the file's manifest
    entry, or None when `name` is not quantised, the embedding models differ, or no vector is shared."""
    import numpy as np

    if "ann" not in compact["files"] or compact.get("fingerprint") != source_compact.get("fingerprint"):
        return None
    matrix = load_npy(folder / compact["files"]["matrix"]["file"], mmap=True)
    theirs = load_npy(folder / source_compact["files"]["matrix"]["file"], mmap=True)
    found = identical_rows(matrix, theirs)
    if not np.any(found >= 0):
        return None
    return write_entry(folder / VECTOR_FILES["identical"].format(name=name), lambda tmp: save_npy(tmp, found))


@dataclass(frozen=True)
class VectorFiles:
    """A vector table's compact files, verified: the matrix memory-mapped read-only (pages load when a
    search touches them), the rows in memory, the quantised index's path."""

    name: str
    matrix: Any
    """(count, dim) float32 `np.memmap`, rows ordered as in the embedded table."""
    rows: Any
    """int32 row of each vector in the embedded table (`VECTOR_TABLES`)."""
    fingerprint: str | None
    ann_path: Path | None
    identical: tuple[str, Any] | None = None
    """The `IDENTICAL_SOURCES` table and, per vector, the index of the same vector there (-1: none)."""


def open_vector_files(folder: Path, name: str, info: dict[str, Any]) -> VectorFiles:
    """The compact files `info["compact"]` records, each hashed in one streaming pass (reads, not the
    mapping, so the check adds nothing resident) and tied to the vector table version the manifest names."""
    import numpy as np

    compact = info["compact"]
    for key, recorded in (("table_version", "version"), ("table_rows", "rows"), ("table_sha256", "sha256")):
        if compact.get(key) != info.get(recorded):
            raise IntegrityError(
                f"vector table {info['table']} v{info['version']}: its {recorded} differs from the compact files' ({compact.get(key)!r})"
            )
    paths = {}
    for kind, entry in compact["files"].items():
        paths[kind] = verified(folder / entry["file"], entry)
    matrix = load_npy(paths["matrix"], mmap=bool(compact["count"]))  # no mapping of 0 bytes
    rows = load_npy(paths["rows"])
    if matrix.shape != (compact["count"], compact["dim"]) or rows.shape != (compact["count"],) or matrix.dtype != np.float32:
        raise IntegrityError(
            f"vector files of {name}: shape {matrix.shape} / {rows.shape}, the manifest records {compact['count']} x {compact['dim']}"
        )
    identical = None
    if "identical" in paths:
        found = load_npy(paths["identical"])
        if found.shape != rows.shape or found.dtype != np.int32 or (len(found) and found.min() < -1) or not compact.get("identical_to"):
            raise IntegrityError(f"vector files of {name}: the identical-vector file does not match its {compact['count']} vectors")
        identical = (compact["identical_to"], found)
    return VectorFiles(name=name, matrix=matrix, rows=rows, fingerprint=compact.get("fingerprint"), ann_path=paths.get("ann"), identical=identical)
