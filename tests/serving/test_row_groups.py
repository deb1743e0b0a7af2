"""`RowGroups` answers as the dict of lists it replaces: a parent's child values in table order."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from petrichor_serving.snapshot import RowGroups


@given(st.lists(st.integers(min_value=-1, max_value=5), max_size=40))
def test_row_groups_equal_grouping_the_rows_in_order(parents):
    keys = [f"p{i}" for i in range(6)]
    values = [f"v{j}" for j in range(len(parents))]
    want: dict[str, list[str]] = {}
    for parent, value in zip(parents, values):
        if parent >= 0:
            want.setdefault(keys[parent], []).append(value)
    got = RowGroups({k: i for i, k in enumerate(keys)}, keys, np.asarray(parents, dtype=np.int64), values)
    assert list(got) == list(want)  # parents in the order of their first child
    assert dict(got.items()) == want
    assert len(got) == len(want)
    for key in keys:
        assert got.get(key, []) == want.get(key, [])
    assert got.get("elsewhere") is None and got.get(3) is None
