"""Budgeted batching and order-keeping bounded concurrency for model calls."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def batch_by_budget(items: Sequence[T], size: Callable[[T], int], max_chars: int, max_items: int) -> list[list[T]]:
    """`batchChunksByBudget`: close a batch at `max_items`, or before an item that would overflow `max_chars`.

    An item larger than the budget on its own still gets a batch (of one); nothing is ever dropped.
    """
    batches: list[list[T]] = []
    current: list[T] = []
    chars = 0
    for item in items:
        n = size(item)
        if len(current) >= max_items or (current and chars + n > max_chars):
            batches.append(current)
            current, chars = [], 0
        current.append(item)
        chars += n
    if current:
        batches.append(current)
    return batches


def map_ordered(fn: Callable[[T], R], items: Sequence[T], concurrency: int) -> list[R]:
    """`fn` over `items` with at most `concurrency` in flight; results in input order.

    `fn` must not raise for expected failures (model errors become fallbacks inside it), so one bad
    batch never cancels its siblings.
    """
    if len(items) <= 1 or concurrency <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        return list(pool.map(fn, items))
