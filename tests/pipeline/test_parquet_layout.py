"""Snapshot Parquet files read back equal whatever layout their columns get (dictionaries, list encodings)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_core.contract.files import list_number_encodings, write_parquet_atomic

_ints = st.lists(st.integers(-(2**31), 2**31 - 1), max_size=6)
_floats = st.lists(st.floats(width=32, allow_nan=False), max_size=6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.none() | _ints, st.none() | _floats, st.text(max_size=5)), max_size=30))
def test_tables_with_numbers_in_lists_read_back_equal(tmp_path_factory, rows):
    table = pa.table(
        {
            "rows": pa.array([r[0] for r in rows], pa.list_(pa.int32())),
            "weights": pa.array([r[1] for r in rows], pa.list_(pa.float32())),
            "term": pa.array([r[2] for r in rows], pa.string()),
        }
    )
    path = tmp_path_factory.mktemp("pq") / "t.parquet"
    write_parquet_atomic(table, path)
    assert pq.read_table(path).equals(table)


def test_numbers_inside_lists_get_their_shapes_encoding_and_others_none():
    table = pa.table(
        {
            "rows": pa.array([[1, 2]], pa.list_(pa.int32())),
            "weights": pa.array([[1.0]], pa.list_(pa.float64())),
            "names": pa.array([["a"]], pa.list_(pa.string())),
            "start": pa.array([3], pa.int64()),
        }
    )
    assert list_number_encodings(table) == {"rows.list.element": "DELTA_BINARY_PACKED", "weights.list.element": "BYTE_STREAM_SPLIT"}
