"""Merging postings groups them by term exactly as a stable sort of every posting would."""

import numpy as np
from hypothesis import given, strategies as st

from petrichor_pipeline.build.lexical_parts import _grouped_positions, _stable_argsort

term_rows = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 4)), max_size=40)


@given(term_rows)
def test_positions_equal_the_stable_sort_of_the_flattened_postings(rows):
    ids = np.array([i for i, _ in rows], dtype=np.int64)
    lengths = np.array([n for _, n in rows], dtype=np.int64)
    expected = np.argsort(np.repeat(ids, lengths), kind="stable")
    assert np.array_equal(_grouped_positions(ids, lengths), expected)


@given(st.lists(st.integers(0, 6), max_size=40))
def test_rows_of_one_posting_each_give_the_same_positions(ids):
    """The wiki's units hold one page each, so every term row has one posting (the shortcut)."""
    ids = np.array(ids, dtype=np.int64)
    lengths = np.ones(len(ids), dtype=np.int64)
    assert np.array_equal(_grouped_positions(ids, lengths), np.argsort(np.repeat(ids, lengths), kind="stable"))


@given(st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 70_000), max_size=60))
def test_the_radix_sort_of_term_ids_is_the_stable_sort(keys):
    keys = np.array(keys, dtype=np.int64)
    assert np.array_equal(_stable_argsort(keys), np.argsort(keys, kind="stable"))
