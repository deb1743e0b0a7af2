"""The trace store: bounded by count (least recently used goes first), readable by its owner only."""

from __future__ import annotations

from petrichor_serving.agent.citations import renumber
from petrichor_serving.agent.trace import Trace, TraceStore


def test_traces_are_kept_per_owner_and_evicted_by_count():
    store = TraceStore(capacity=2)
    a, b, c = (Trace(snapshot_version="v1") for _ in range(3))
    store.put("key:alice:acme", a)
    store.put("key:bob:globex", b)
    assert store.get("key:alice:acme", a.trace_id) is a
    assert store.get("key:bob:globex", a.trace_id) is None  # someone else's trace does not exist
    assert store.get("public", a.trace_id) is None
    store.put("key:alice:acme", c)  # b is the least recently used now
    assert len(store) == 2
    assert store.get("key:bob:globex", b.trace_id) is None
    assert store.get("key:alice:acme", a.trace_id) is a and store.get("key:alice:acme", c.trace_id) is c


def test_one_marker_per_distinct_quote_in_order_of_use():
    cites = [
        {"marker": 1, "chunk_id": "c1", "quote_start": 0, "quote": "alpha"},
        {"marker": 2, "chunk_id": "c2", "quote_start": 5, "quote": "beta"},
        {"marker": 3, "chunk_id": "c1", "quote_start": 0, "quote": "alpha"},
    ]
    text, out = renumber("B [2]. A [1]. A again [3].", cites)
    assert text == "B [1]. A [2]. A again [2]."
    assert [(c["marker"], c["quote"]) for c in out] == [(1, "beta"), (2, "alpha")]
