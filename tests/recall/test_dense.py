"""In-memory vector search: the quantised index proposes, the matrix decides, the access mask always holds."""

from __future__ import annotations

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_core.contract.schemas import vector_schema
from petrichor_serving.recall import dense
from petrichor_serving.recall.dense import DenseVectors

DIM = 16
FP = "fixed:16:v1"
N = 2500


def _table(db, vectors: np.ndarray, ids: list[str], fingerprints: list[str]):
    rows = [
        dict(id=i, article_id="a", kb_id="kb", tenant="t", content_hash="h", fingerprint=fp, vector=v.tolist())
        for i, fp, v in zip(ids, fingerprints, vectors)
    ]
    return db.create_table("vectors", data=pa.Table.from_pylist(rows, schema=vector_schema(DIM)))


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


@pytest.fixture()
def tables(tmp_path, monkeypatch):
    """The same vectors loaded with the quantised index and without; the table is not in row order."""
    rng = np.random.default_rng(3)
    order = rng.permutation(N)
    ids = [f"c{i}" for i in order]
    table = _table(lancedb.connect(tmp_path / "lance"), _unit(rng, N), ids, [FP] * N)
    row_of = {f"c{i}": i for i in range(N)}
    exact = DenseVectors.from_lance(table, row_of)
    monkeypatch.setattr(dense, "ANN_MIN_ROWS", 1000)
    quantised = DenseVectors.from_lance(table, row_of)
    assert exact.ann is None and quantised.ann is not None and quantised.aligned
    return exact, quantised


def _queries(n: int = 20) -> np.ndarray:
    return _unit(np.random.default_rng(11), n)


def _masks() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    three = np.zeros(N, dtype=bool)
    three[[7, 1500, 2499]] = True
    return {
        "all": np.ones(N, dtype=bool),
        "most": rng.random(N) < 0.8,
        "half": rng.random(N) < 0.5,
        "a fifth": rng.random(N) < 0.21,
        "a tenth": rng.random(N) < 0.1,
        "three rows": three,
        "none": np.zeros(N, dtype=bool),
    }


def test_quantised_search_finds_the_exact_neighbours(tables):
    exact, quantised = tables
    for name, mask in _masks().items():
        for q in _queries():
            want = exact.nearest(q, mask, 10, FP)
            got = quantised.nearest(q, mask, 10, FP)
            assert [i for i, _ in got] == [i for i, _ in want], name
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)


def test_masked_rows_never_take_a_slot(tables):
    _, quantised = tables
    for name, mask in _masks().items():
        for q in _queries(5):
            got = quantised.nearest(q, mask, 30, FP)
            assert len(got) == min(30, int(mask.sum())), name
            assert all(mask[row] for row, _ in got), name


def test_scores_are_exact_cosines_best_first(tables):
    _, quantised = tables
    q = _queries(1)[0]
    got = quantised.nearest(q, np.ones(N, dtype=bool), 10, FP)
    matrix = {row: quantised.matrix[k] for k, row in enumerate(quantised.rows.tolist())}
    assert [s for _, s in got] == pytest.approx([float(matrix[i] @ q) for i, _ in got], abs=1e-6)
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)


def test_other_models_and_unknown_ids_are_never_returned(tmp_path):
    rng = np.random.default_rng(9)
    vectors = _unit(rng, 6)
    ids = ["c0", "c1", "c2", "c1", "stray", "c3"]
    fps = [FP, FP, FP, "other:16:v1", FP, FP]
    table = _table(lancedb.connect(tmp_path / "lance"), vectors, ids, fps)
    vecs = DenseVectors.from_lance(table, {"c0": 0, "c1": 1, "c2": 2, "c3": 3})
    assert not vecs.aligned and sorted(vecs.rows.tolist()) == [0, 1, 1, 2, 3]  # "stray" has no row
    q = vectors[3]  # exactly the other model's vector of c1
    got = vecs.nearest(q, np.ones(4, dtype=bool), 10, FP)
    assert sorted(row for row, _ in got) == [0, 1, 2, 3]
    assert dict(got)[1] == pytest.approx(float(vectors[1] @ q), abs=1e-6)
    assert [row for row, _ in vecs.nearest(q, np.array([False, True, False, True]), 10, FP)] == sorted(
        [1, 3], key=lambda row: -float(vectors[ids.index(f"c{row}")] @ q)
    )
    assert vecs.nearest(q, np.ones(4, dtype=bool), 10, "unknown:16:v1") == []


def test_tables_sharing_vectors_score_them_once_with_the_same_results():
    """A chunk of one window has its window's vector: the second table takes the first one's product for
    those rows, and every search result equals the unshared table's."""
    from petrichor_serving.recall.dense import share_identical

    rng = np.random.default_rng(21)
    windows = _unit(rng, 300)
    chunks = np.concatenate([windows[::3], _unit(rng, 40)])  # 100 chunks of one window, 40 of several
    chunks = chunks[rng.permutation(len(chunks))]

    def table(matrix):
        n = len(matrix)
        return DenseVectors(matrix=matrix, rows=np.arange(n), fingerprints=np.zeros(n, np.int16), fingerprint_codes={FP: 0}, aligned=True)

    plain = {"window_vectors": table(windows), "chunk_vectors": table(chunks)}
    linked = share_identical(plain)
    shared = linked["chunk_vectors"].shared
    assert shared is not None and len(shared.own) == 100 and len(shared.rest) == 40
    assert linked["window_vectors"].shared is None
    masks = [np.ones(len(chunks), dtype=bool), np.random.default_rng(2).random(len(chunks)) < 0.7, np.eye(1, len(chunks), 5, dtype=bool)[0]]
    for q in _queries(10):
        scans: dict = {}
        linked["window_vectors"].nearest(q, np.ones(len(windows), dtype=bool), 20, FP, scans)
        for mask in masks:
            got = linked["chunk_vectors"].nearest(q, mask, 10, FP, scans)
            want = plain["chunk_vectors"].nearest(q, mask, 10, FP)
            assert [r for r, _ in got] == [r for r, _ in want]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
        assert len(scans) == 2  # one product per table for the query


@settings(max_examples=60, deadline=None)
@given(
    n_source=st.integers(0, 40),
    picks=st.lists(st.one_of(st.integers(0, 39), st.none()), max_size=40),
    seed=st.integers(0, 2**16),
    zero_sign=st.booleans(),
)
def test_identical_rows_pairs_exactly_the_vectors_equal_bit_for_bit(n_source, picks, seed, zero_sign):
    """Every pairing is bit-for-bit equal and every unpaired row has no equal row in the source (-0.0 and
    0.0 differ in bits, so they are not paired)."""
    from petrichor_core.contract.vectors import identical_rows

    rng = np.random.default_rng(seed)
    source = _unit(rng, n_source)
    if zero_sign and n_source:
        source[0, 0] = 0.0
    rows = []
    for pick in picks:
        if pick is not None and pick < n_source:
            row = source[pick].copy()
            if zero_sign and pick == 0:
                row[0] = -0.0  # equal as a float, different bits
            rows.append(row)
        else:
            rows.append(_unit(rng, 1)[0])
    matrix = np.array(rows, dtype=np.float32).reshape(-1, DIM)
    found = identical_rows(matrix, source)
    assert found.dtype == np.int32 and found.shape == (len(matrix),)
    bits = lambda m: np.ascontiguousarray(m, dtype=np.float32).view(np.uint32)  # noqa: E731
    for i, j in enumerate(found.tolist()):
        equal = [k for k in range(n_source) if np.array_equal(bits(source[k]), bits(matrix[i]))]
        if j >= 0:
            assert j in equal
        else:
            assert not equal


def _shared_pair(rng: np.random.Generator, monkeypatch):
    """A quantised window table and a quantised chunk table holding 1,500 of its vectors (one twice) and 60
    of its own, the pairing recorded as the publish records it."""
    from petrichor_core.contract.vectors import identical_rows, quantised_index

    monkeypatch.setattr(dense, "ANN_MIN_ROWS", 1000)
    windows = _unit(rng, N)
    picked = rng.choice(N, 1500, replace=False)
    chunks = np.concatenate([windows[picked], windows[picked[:1]], _unit(rng, 60)])
    chunks = chunks[rng.permutation(len(chunks))]

    def table(matrix, identical=None):
        n = len(matrix)
        return DenseVectors(
            matrix=matrix,
            rows=np.arange(n),
            fingerprints=np.zeros(n, np.int16),
            fingerprint_codes={FP: 0},
            aligned=True,
            ann=quantised_index(matrix),
            identical=identical,
        )

    plain = {"window_vectors": table(windows), "chunk_vectors": table(chunks)}
    recorded = {**plain, "chunk_vectors": table(chunks, ("window_vectors", identical_rows(chunks, windows)))}
    return plain, recorded


class _Counted:
    """A quantised index that counts its searches."""

    def __init__(self, index):
        self.index, self.searches = index, 0

    def search(self, *args):
        self.searches += 1
        return self.index.search(*args)


def test_a_quantised_table_finds_its_shared_vectors_through_the_source_scan(monkeypatch):
    """The chunk table's quantised index is not searched while the window table's ranking serves it (an
    unrestricted search reads the window route's ranking; a narrower scope searches it deeper), only for a
    scope too narrow for that ranking; the neighbours always equal the exact search's over the chunk table."""
    from dataclasses import replace

    from petrichor_serving.recall.dense import share_identical

    plain, recorded = _shared_pair(np.random.default_rng(8), monkeypatch)
    linked = share_identical(recorded)
    chunks, windows = linked["chunk_vectors"], linked["window_vectors"]
    assert chunks.shared is not None and len(chunks.shared.own) == 1500 and len(chunks.shared.rest) == 61
    source_ann, own_ann = _Counted(windows.ann), _Counted(chunks.ann)
    windows = replace(windows, ann=source_ann)
    chunks = replace(chunks, ann=own_ann, shared=replace(chunks.shared, source=windows))
    exact = replace(plain["chunk_vectors"], ann=None)
    n = len(chunks.rows)
    masks = {
        "all": np.ones(n, dtype=bool),
        "most": np.random.default_rng(4).random(n) < 0.8,
        "a quarter": np.random.default_rng(6).random(n) < 0.25,
    }  # 0.25 x 1,500 / 2,500 of the ranking: too few
    for q in _queries():
        scans: dict = {}
        windows.nearest(q, np.ones(N, dtype=bool), 40, FP, scans)
        for name, mask in masks.items():
            got = chunks.nearest(q, mask, 10, FP, scans)
            want = exact.nearest(q, mask, 10, FP)
            assert [r for r, _ in got] == [r for r, _ in want], name
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
    assert own_ann.searches == len(_queries())  # the quarter's
    assert source_ann.searches == 2 * len(_queries())  # the window route's, which "all" reads; "most" goes deeper


def test_a_recorded_share_is_refused_when_it_would_not_pay(monkeypatch):
    """Too few shared vectors, or too many left to score exactly: the table keeps scanning its own index."""
    from dataclasses import replace

    from petrichor_serving.recall.dense import share_identical

    _, recorded = _shared_pair(np.random.default_rng(8), monkeypatch)
    chunks = recorded["chunk_vectors"]
    name, found = chunks.identical
    few = np.where(np.arange(len(found)) < 100, found, -1).astype(np.int32)
    assert share_identical({**recorded, "chunk_vectors": replace(chunks, identical=(name, few))})["chunk_vectors"].shared is None
    monkeypatch.setattr(dense, "ANN_MIN_ROWS", 50)  # the 61 unshared vectors are now too many to score exactly
    assert share_identical(recorded)["chunk_vectors"].shared is None
    beyond = found.copy()
    beyond[np.argmax(found)] = N
    with pytest.raises(ValueError, match="beyond"):
        share_identical({**recorded, "chunk_vectors": replace(chunks, identical=(name, beyond))})
