"""Id lookups over Arrow columns (`tables.IdRows`) and heading paths walked up parent rows
(`tables.HeadingPaths`) answer as the dicts and tuples built per row did."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_serving.recall.tables import HeadingPaths, IdRows, rows_for

ids_strategy = st.lists(st.text(alphabet="ab:-中文1", min_size=1, max_size=6), max_size=40)


@settings(max_examples=200, deadline=None)
@given(ids=ids_strategy, probes=st.lists(st.text(alphabet="ab:-中文1", max_size=6), max_size=10), chunks=st.integers(1, 3))
def test_lookups_equal_a_dict_built_in_row_order(ids, probes, chunks):
    expected = {key: row for row, key in enumerate(ids)}  # a repeated id: its last row
    size = max(1, -(-len(ids) // chunks))
    column = pa.chunked_array([pa.array(ids[i : i + size], pa.string()) for i in range(0, len(ids), size)] or [pa.array([], pa.string())])
    rows = IdRows(column)
    keys = [*ids, *probes]
    assert [rows.get(k) for k in keys] == [expected.get(k) for k in keys]
    assert rows_for(rows, keys).tolist() == [expected.get(k, -1) for k in keys]
    assert all((k in rows) == (k in expected) for k in keys)
    assert len(rows) == len(ids)


def test_a_missing_id_raises_key_error():
    rows = IdRows(pa.chunked_array([pa.array(["a", "b"])]))
    assert rows["b"] == 1
    try:
        rows["c"]
    except KeyError:
        pass
    else:
        raise AssertionError("no KeyError")
    assert rows.get(3) is None


def _paths_per_row(parents: list[int], depths: list[int], titles: list[str]) -> list[tuple[str, ...]]:
    """Each node's titles from the top down, the root (depth 0) left out: the path built per node."""
    out = []
    for row in range(len(parents)):
        chain, current = [], row
        while current >= 0:
            chain.append(current)
            current = parents[current]
        out.append(tuple(titles[r] for r in reversed(chain) if depths[r] > 0))
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=30))
def test_heading_paths_walk_an_acyclic_tree(choices):
    # node i's parent is an earlier node (or none for the first): every such tree is acyclic
    parents = [-1] + [c % i for i, c in zip(range(1, len(choices)), choices[1:])]
    depths = [0] + [1] * (len(parents) - 1)
    for i in range(1, len(parents)):
        depths[i] = depths[parents[i]] + 1
    titles = [f"t{i}" for i in range(len(parents))]
    paths = HeadingPaths(np.asarray(parents), np.asarray(depths), titles)
    assert [paths[i] for i in range(len(paths))] == _paths_per_row(parents, depths, titles)
    assert paths[1:3] == _paths_per_row(parents, depths, titles)[1:3]


def test_a_parent_loop_stops_before_repeating_a_node():
    paths = HeadingPaths(np.asarray([1, 0]), np.asarray([1, 1]), ["a", "b"])
    assert paths[0] == ("b", "a") and paths[1] == ("a", "b")
