"""A job whose one step kills its own Celery worker process while an independent step is still running and a
third waits for that one: what a lost worker leaves behind when the run still has steps it has not submitted."""

from __future__ import annotations

import os
import signal
import time

from dagster import In, job, op

from petrichor_pipeline.executors import bucket_executor

SLOW_S = 8.0
"""Long enough that the killed step's error comes back while `slow` still runs, so `after_slow` is not yet
submitted when it does."""


@op
def dies() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


@op
def slow() -> int:
    time.sleep(SLOW_S)
    return 1


@op(ins={"value": In(int)})
def after_slow(value: int) -> int:
    return value + 1


@job(executor_def=bucket_executor)
def lost_worker_job() -> None:
    dies()
    after_slow(slow())
