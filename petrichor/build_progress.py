"""What `petrichor build` shows on stderr while it runs, so a long build is never silent.

In a terminal: a live line per stage (rich), with the long steps' counts, rate and ETA. Anywhere else (a
log file, CI, a pipe): plain lines, a stage's line when it ends and the running stages' lines at least every
`PROGRESS_LINE_S`, a heartbeat when none runs. stdout is never written, so `--json` stays one document.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Self

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from petrichor_pipeline.build.context import StepCount
from petrichor_pipeline.config import PROGRESS_LINE_S


@dataclass
class Stage:
    """One stage as the display knows it: its finished buckets and, for a long step, its latest count."""

    name: str
    started: float
    done: int = 0
    total: int = 0
    count: StepCount | None = None
    ended: float | None = None

    def line(self, now: float) -> str:
        buckets = f"{self.done}/{self.total} buckets"
        if self.ended is not None:
            return f"{self.name}: {buckets}, done in {self.ended - self.started:.1f}s"
        if self.count is not None:
            return f"{self.count.line()} ({buckets})"
        return f"{self.name}: {buckets}, {now - self.started:.0f}s"


class BuildProgress:
    """Hears the build's stages (`on_stage`) and counts (`on_count`) from any thread; a context manager."""

    def __init__(self, console: Console, *, live: bool):
        self._console = console
        self._live = live
        self._lock = threading.Lock()
        self._stages: dict[str, Stage] = {}
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._bars: Progress | None = None
        self._tasks: dict[str, Any] = {}
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Self:
        if self._live:
            self._bars = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=self._console)
            self._bars.start()
        else:
            self._ticker = threading.Thread(target=self._tick, name="build-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self._bars is not None:
            self._bars.stop()

    def on_stage(self, name: str, done: int, total: int) -> None:
        now = time.monotonic()
        with self._lock:
            stage = self._stages.setdefault(name, Stage(name, now))
            stage.done, stage.total = done, total
            ended = done >= total and stage.ended is None
            if ended:
                stage.ended = now
            self._show(stage, now, ended)

    def on_count(self, count: StepCount) -> None:
        now = time.monotonic()
        with self._lock:
            stage = self._stages.setdefault(count.asset, Stage(count.asset, now - count.seconds))
            stage.count = count
            self._show(stage, now, ended=False)

    def _show(self, stage: Stage, now: float, ended: bool) -> None:
        """The stage's line: updated live in a terminal, else written once when it ends (under the lock)."""
        if self._bars is None:
            if ended:
                self._write(stage.line(now))
            return
        count = stage.count if stage.ended is None else None
        done, total = (count.done, count.total) if count is not None else (stage.done, stage.total)
        if stage.name not in self._tasks:
            self._tasks[stage.name] = self._bars.add_task(stage.line(now), total=max(total, 1))
        self._bars.update(self._tasks[stage.name], description=stage.line(now), completed=done, total=max(total, 1))

    def _tick(self) -> None:
        """Outside a terminal: the running stages' lines every `PROGRESS_LINE_S`, else a heartbeat."""
        while not self._stop.wait(PROGRESS_LINE_S):
            now = time.monotonic()
            with self._lock:
                running = [s.line(now) for s in self._stages.values() if s.ended is None]
            for line in running or [f"build: {now - self._started:.0f}s elapsed"]:
                self._write(line)

    @staticmethod
    def _write(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
