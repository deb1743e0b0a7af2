"""Merging postings groups them by term exactly as a stable sort of every posting would."""

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from petrichor_pipeline.builder.lexical_parts import _merged_index, _stable_argsort

TERMS = st.sampled_from(["a", "ab", "b", "é", "z", "中", "中文"])
unit_rows = st.lists(st.tuples(TERMS, st.lists(st.tuples(st.integers(0, 4), st.integers(1, 3)), max_size=4)), max_size=8)


def _expected(units, starts):
    """Each term (in code point order) with its postings in unit order, rows shifted by their unit's start."""
    by_term: dict[str, tuple[list[int], list[float]]] = {}
    lengths: dict[int, float] = {}
    for unit, start in zip(units, starts):
        for term, postings in unit:
            rows, weights = by_term.setdefault(term, ([], []))
            for row, weight in postings:
                rows.append(start + row)
                weights.append(float(weight))
                lengths[start + row] = lengths.get(start + row, 0.0) + weight
    return by_term, lengths


@given(st.lists(unit_rows, min_size=1, max_size=5), st.integers(0, 1), st.integers(0, 3))
def test_the_merged_index_equals_the_postings_gathered_term_by_term(units, sliced, pad):
    starts = list(np.cumsum([0] + [5] * len(units)))[:-1]
    flat = [(term, postings, start) for unit, start in zip(units, starts) for term, postings in unit]
    table = pa.table(
        {
            "term": pa.array([t for t, _, _ in flat], pa.string()),
            "rows": pa.array([[r for r, _ in p] for _, p, _ in flat], pa.list_(pa.int32())),
            "weights": pa.array([[float(w) for _, w in p] for _, p, _ in flat], pa.list_(pa.float32())),
        }
    )
    shifts = np.array([s for _, _, s in flat], dtype=np.int64)
    if sliced and table.num_rows:  # a table whose lists start past the first value (a slice of a larger one)
        head = pa.table({"term": ["a"] * pad, "rows": [[0, 1]] * pad, "weights": [[1.0, 1.0]] * pad}, schema=table.schema)
        table = pa.concat_tables([head, table]).combine_chunks().slice(pad)
    size = 5 * len(units)
    merged = _merged_index("chunk", table, shifts, size)
    by_term, lengths = _expected(units, starts)
    got = merged.postings.to_pylist()
    assert [r["term"] for r in got] == sorted(by_term)
    assert all(r["index"] == "chunk" for r in got)
    for r in got:
        assert (r["rows"], r["weights"]) == by_term[r["term"]]
    assert merged.lengths.tolist() == [lengths.get(row, 0.0) for row in range(size)]


@given(st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 70_000), max_size=60))
def test_the_radix_sort_of_term_ids_is_the_stable_sort(keys):
    keys = np.array(keys, dtype=np.int64)
    assert np.array_equal(_stable_argsort(keys), np.argsort(keys, kind="stable"))
