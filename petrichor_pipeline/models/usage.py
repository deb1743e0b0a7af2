"""Thread-safe recording into a `UsageMeter`: model calls run on many threads at once."""

from __future__ import annotations

import threading

from petrichor_pipeline.models.protocols import UsageMeter, UsageRecord

_lock = threading.Lock()


def record_usage(meter: UsageMeter | None, op: str, article_id: str, rec: UsageRecord) -> None:
    if meter is None:
        return
    with _lock:
        meter.record(op, article_id, rec)
