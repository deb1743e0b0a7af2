"""The progress of a bucket run whose steps run in processes of their own, read back from its Dagster event log
while it runs: each stale bucket's materialization is a finished stage, each count line a long step logged
(`context.StepCounter`) is its running count. A run in this process hears both directly (`StageListener`);
a multiprocess run can only be heard through what it records, which is what Dagster's UI shows too.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from dagster import DagsterEventType, RunsFilter

from petrichor_pipeline.builder.context import StepCount

log = logging.getLogger(__name__)

POLL_S = 1.0
"""How often the run's new events are read."""


class RunProgress:
    """Follows the run tagged `tags` (started by the caller inside the `with`) until the `with` ends; hears
    `stage_done(asset)` for each materialization of a bucket in `stale` and `on_count` for each count line.
    Reading is best effort: a failed read is tried again at the next poll and never fails the build."""

    def __init__(
        self,
        instance: Any,
        tags: dict[str, str],
        stale: list[str],
        stage_done: Callable[[str], None],
        on_count: Callable[[StepCount], None] | None,
    ):
        self._instance = instance
        self._tags = tags
        self._stale = set(stale)
        self._stage_done = stage_done
        self._on_count = on_count
        self._run_id: str | None = None
        self._cursor: str | None = None
        self._first: dict[str, float] = {}
        self.finished: Counter[str] = Counter()
        """Stale buckets heard finished, by asset."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="run-progress", daemon=True)

    def __enter__(self) -> RunProgress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._poll()  # what the run recorded since the last poll

    def _follow(self) -> None:
        while not self._stop.wait(POLL_S):
            self._poll()

    def _poll(self) -> None:
        try:
            if self._run_id is None:
                runs = self._instance.get_runs(filters=RunsFilter(tags=self._tags), limit=1)
                if not runs:
                    return
                self._run_id = runs[0].run_id
            while True:
                got = self._instance.get_records_for_run(self._run_id, cursor=self._cursor)
                self._cursor = got.cursor
                for record in got.records:
                    self._hear(record.event_log_entry)
                if not got.has_more:
                    return
        except Exception as exc:  # noqa: BLE001 - progress is best effort; the run's result is what counts
            log.debug("cannot read the run's progress yet: %s", exc)

    def _hear(self, entry: Any) -> None:
        event = entry.dagster_event
        if event is None:
            count = StepCount.parse(entry.user_message)
            if count is not None and self._on_count is not None:
                first = self._first.setdefault(count.asset, entry.timestamp)
                self._on_count(StepCount(count.asset, count.activity, count.done, count.total, entry.timestamp - first, count.unit))
        elif event.event_type == DagsterEventType.ASSET_MATERIALIZATION and event.partition in self._stale:
            asset = event.asset_key.to_user_string()
            self.finished[asset] += 1
            self._stage_done(asset)
