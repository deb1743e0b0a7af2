"""What `petrichor build` shows on stderr while it runs, so a long build is never silent.

In a terminal: a live line per stage (rich), with the long steps' counts, rate and ETA, under a line of the
build's elapsed time. Anywhere else (a log file, CI, a pipe): plain lines, a stage's line when it ends and the
running stages' lines at least every `PROGRESS_LINE_S`, a heartbeat when none runs. stdout is never written,
so `--json` stays one document.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Self

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from petrichor_core.config import PROGRESS_LINE_S
from petrichor_pipeline.builder.context import StepCount
from petrichor_pipeline.runner import PUBLISH_STAGE

LIVE_REFRESH_S = 1.0
"""How often a terminal's lines are redrawn between the build's events (the elapsed times move on)."""


@dataclass
class Stage:
    """One stage as the display knows it: its finished buckets and, for a long step, its latest count. Only
    finished buckets are heard, not a stage's start, so times are the build's (`at`: seconds into it)."""

    name: str
    done: int = 0
    total: int = 0
    count: StepCount | None = None
    ended: bool = False

    def line(self, at: float) -> str:
        if self.name == PUBLISH_STAGE:
            return f"{self.name}: {'done' if self.ended else 'publishing'}, {at:.0f}s into the build"
        buckets = f"{self.done}/{self.total} buckets done, " if self.total else ""  # none heard yet: no total
        if self.count is not None and not self.ended:
            return f"{self.count.line()} ({buckets}{at:.0f}s into the build)"
        return f"{self.name}: {buckets}{at:.0f}s into the build"


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
            self._bars = Progress(TextColumn("{task.description}"), BarColumn(), console=self._console)
            self._tasks[""] = self._bars.add_task(self._elapsed(), total=None)
            self._bars.start()
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
        with self._lock:
            stage = self._stages.setdefault(name, Stage(name))
            stage.done, stage.total = done, total
            ended = done >= total and not stage.ended
            stage.ended = stage.ended or ended
            self._show(stage, ended)

    def on_count(self, count: StepCount) -> None:
        with self._lock:
            stage = self._stages.setdefault(count.asset, Stage(count.asset))
            stage.count = count
            self._show(stage, ended=False)

    def _at(self) -> float:
        return time.monotonic() - self._started

    def _show(self, stage: Stage, ended: bool) -> None:
        """The stage's line: updated live in a terminal, else written once when it ends (under the lock)."""
        if self._bars is None:
            if ended:
                self._write(stage.line(self._at()))
            return
        count = None if stage.ended else stage.count
        done, total = (count.done, count.total) if count is not None else (stage.done, stage.total)
        if stage.name not in self._tasks:
            self._tasks[stage.name] = self._bars.add_task("", total=max(total, 1))
        self._bars.update(self._tasks[stage.name], description=stage.line(self._at()), completed=done, total=max(total, 1))

    def _elapsed(self) -> str:
        return f"build: {self._at():.0f}s elapsed"

    def _tick(self) -> None:
        """In a terminal: every line redrawn each `LIVE_REFRESH_S`. Elsewhere: the running stages' lines every
        `PROGRESS_LINE_S`, else a heartbeat."""
        while not self._stop.wait(LIVE_REFRESH_S if self._bars is not None else PROGRESS_LINE_S):
            at = self._at()
            with self._lock:
                running = [s for s in self._stages.values() if not s.ended]
                if self._bars is not None:
                    self._bars.update(self._tasks[""], description=self._elapsed())
                    for stage in running:
                        self._bars.update(self._tasks[stage.name], description=stage.line(at))
                    continue
            for line in [s.line(at) for s in running] or [self._elapsed()]:
                self._write(line)

    @staticmethod
    def _write(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
