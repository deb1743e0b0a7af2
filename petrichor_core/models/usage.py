"""Thread-safe recording into a `UsageMeter`, and the meter of one build run.

Model calls run on many threads at once, so every record goes through one lock.
"""

from __future__ import annotations

import threading

from petrichor_core.models.protocols import UsageMeter, UsageRecord

_lock = threading.Lock()


class RunMeter(UsageMeter):
    """The usage of one run, and the request slots every model client of that run shares.

    The slots ride on the meter because the meter is the one object each client of a run is handed:
    the chat model, the embedder and the vision transcriber then hold one limit between them,
    sized from that run's `model_concurrency`.
    """

    def __init__(self, model_concurrency: int):
        super().__init__()
        self.slots = threading.BoundedSemaphore(max(1, model_concurrency))


def record_usage(meter: UsageMeter | None, op: str, article_id: str, rec: UsageRecord) -> None:
    if meter is None:
        return
    with _lock:
        meter.record(op, article_id, rec)
