"""A quantised chunk table records which of its vectors the window table holds bit for bit; the record is
a verified snapshot file like the others, and serving finds those vectors through the window ranking."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from petrichor_core.contract import vectors as contract_vectors
from petrichor_core.contract.manifest import IntegrityError
from petrichor_core.contract.schemas import vector_schema
from petrichor_core.contract.vectors import open_vector_files, write_identical_file, write_vector_files
from petrichor_serving.recall.dense import DenseVectors, share_identical

DIM = 8
FP = "fixed:8:v1"


def _rows(ids: list[str], matrix: np.ndarray) -> pa.Table:
    n = len(ids)
    return pa.Table.from_pydict(
        {
            "id": ids,
            "article_id": ["a"] * n,
            "kb_id": ["kb"] * n,
            "tenant": ["t"] * n,
            "content_hash": ids,
            "fingerprint": [FP] * n,
            "vector": [v.tolist() for v in matrix],
        },
        schema=vector_schema(DIM),
    )


def _written(folder, monkeypatch, windows: np.ndarray, chunks: np.ndarray) -> dict[str, dict]:
    monkeypatch.setattr(contract_vectors, "ANN_MIN_ROWS", 64)
    infos = {}
    for name, matrix, prefix in (("window_vectors", windows, "w"), ("chunk_vectors", chunks, "c")):
        ids = [f"{prefix}{i}" for i in range(len(matrix))]
        info = {"table": name, "version": 1, "rows": len(ids), "sha256": "x"}
        info["compact"] = write_vector_files(folder, name, _rows(ids[::-1], matrix[::-1]), info, ids)
        infos[name] = info
    return infos


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_the_publish_records_the_shared_vectors_and_serving_uses_them(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    windows = _unit(rng, 300)
    chunks = np.concatenate([windows[:200:2], _unit(rng, 20)])
    infos = _written(tmp_path, monkeypatch, windows, chunks)
    mine, theirs = infos["chunk_vectors"]["compact"], infos["window_vectors"]["compact"]
    entry = write_identical_file(tmp_path, "chunk_vectors", "window_vectors", mine, theirs)
    assert entry is not None and entry["file"] == "chunk_vectors.identical.npy"
    mine["files"]["identical"], mine["identical_to"] = entry, "window_vectors"

    files = {name: open_vector_files(tmp_path, name, info) for name, info in infos.items()}
    name, found = files["chunk_vectors"].identical
    assert name == "window_vectors" and found.tolist() == [*range(0, 200, 2), *[-1] * 20]
    assert files["window_vectors"].identical is None

    row_of = lambda n, p: {f"{p}{i}": i for i in range(n)}  # noqa: E731
    loaded = share_identical(
        {
            "chunk_vectors": DenseVectors.from_files(files["chunk_vectors"], row_of(len(chunks), "c")),
            "window_vectors": DenseVectors.from_files(files["window_vectors"], row_of(len(windows), "w")),
        }
    )
    shared = loaded["chunk_vectors"].shared
    assert shared is not None and shared.source is loaded["window_vectors"] and len(shared.rest) == 20
    q = _unit(rng, 1)[0]
    scans: dict = {}
    loaded["window_vectors"].nearest(q, np.ones(len(windows), dtype=bool), 40, FP, scans)
    got = loaded["chunk_vectors"].nearest(q, np.ones(len(chunks), dtype=bool), 10, FP, scans)
    want = np.argsort(-(chunks @ q), kind="stable")[:10]
    assert [r for r, _ in got] == want.tolist()


def test_no_record_without_a_quantised_table_or_a_shared_vector(tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    infos = _written(tmp_path, monkeypatch, _unit(rng, 300), _unit(rng, 100))
    assert (
        write_identical_file(tmp_path, "chunk_vectors", "window_vectors", infos["chunk_vectors"]["compact"], infos["window_vectors"]["compact"])
        is None
    )
    small = tmp_path / "small"
    small.mkdir()
    windows = _unit(rng, 300)
    infos = _written(small, monkeypatch, windows, windows[:40])  # 40 vectors: below the quantised size
    assert "ann" not in infos["chunk_vectors"]["compact"]["files"]
    assert (
        write_identical_file(small, "chunk_vectors", "window_vectors", infos["chunk_vectors"]["compact"], infos["window_vectors"]["compact"]) is None
    )


def test_a_changed_record_is_refused_at_load(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    windows = _unit(rng, 300)
    infos = _written(tmp_path, monkeypatch, windows, windows[:100])
    mine = infos["chunk_vectors"]["compact"]
    mine["files"]["identical"] = write_identical_file(tmp_path, "chunk_vectors", "window_vectors", mine, infos["window_vectors"]["compact"])
    mine["identical_to"] = "window_vectors"
    path = tmp_path / "chunk_vectors.identical.npy"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(IntegrityError):
        open_vector_files(tmp_path, "chunk_vectors", infos["chunk_vectors"])
