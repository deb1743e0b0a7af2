"""The run's trace and the bounded store that serves it back at `GET /api/traces/{trace_id}`.

A trace records what the agent did: each tool call with its arguments, the locators it returned, its
time, the stop reason and the snapshot version. The store keeps the most recent `capacity` traces (LRU
by count) and hands one back only to the principal that made it; to anyone else it does not exist.
Given a data folder, it pins the article versions each kept trace cites (`contract.history.pin_path`) so the
build's history collection keeps them resolvable, and unpins a trace when it is evicted.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from petrichor_core.contract.files import write_text_atomic
from petrichor_core.contract.history import pin_path

log = logging.getLogger(__name__)

DEFAULT_CAPACITY = 512


class StopReason(str, Enum):
    ANSWERED = "answered"
    BUDGET = "budget"
    NO_PROGRESS = "no_progress"
    NOTHING_FOUND = "nothing_found"
    MODEL_ERROR_FALLBACK = "model_error_fallback"
    """The chat endpoint failed for good (an error status, a timeout): the offline extractive answer from the
    evidence read is returned, never a not-found the evidence does not support."""
    OFFLINE_FALLBACK = "offline_fallback"
    """The model's answer had no verified citation (after one retry): the offline extractive answer is returned."""


@dataclass
class ToolCall:
    tool: str
    arguments: dict[str, Any]
    locators: list[str] = field(default_factory=list)
    ms: float = 0.0
    error: str | None = None


@dataclass
class Trace:
    snapshot_version: str
    question_class: str = ""
    hint: str = ""
    trace_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    steps: list[ToolCall] = field(default_factory=list)
    stop_reason: str = StopReason.ANSWERED.value
    dropped_citations: list[dict[str, Any]] = field(default_factory=list)
    """Quotes the answer cited that are not verbatim in what was read: dropped, and kept here."""
    notes: list[str] = field(default_factory=list)
    answerability: dict[str, Any] | None = None
    """The answerability verdict on the answer's cited evidence: each signal, and the one that fell short."""
    cites: list[tuple[str, str]] = field(default_factory=list)
    """(article_id, article_version) of every citation the answer kept: what the trace's pin holds."""
    started_at: float = field(default_factory=time.time)
    total_ms: float = 0.0

    def record(
        self, tool: str, arguments: dict[str, Any], started: float, *, locators: list[str] | None = None, error: str | None = None
    ) -> ToolCall:
        call = ToolCall(tool, arguments, list(locators or []), round((time.perf_counter() - started) * 1000, 2), error)
        self.steps.append(call)
        return call

    def plan(self) -> list[str]:
        return [s.tool for s in self.steps]

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["plan"] = self.plan()
        return doc


class TraceStore:
    """The last `capacity` traces, each readable only by the principal that made it."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, *, pins_data_dir: Path | None = None):
        self.capacity = capacity
        self.pins_data_dir = pins_data_dir
        """None: no pins (the cited versions are then kept only while a snapshot or the retention holds them)."""
        self._items: OrderedDict[str, tuple[str, Trace]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, owner: str, trace: Trace) -> None:
        evicted: list[Trace] = []
        with self._lock:
            self._items[trace.trace_id] = (owner, trace)
            self._items.move_to_end(trace.trace_id)
            while len(self._items) > self.capacity:
                evicted.append(self._items.popitem(last=False)[1][1])
        self._pin(trace)
        for old in evicted:
            self._unpin(old)

    def _pin(self, trace: Trace) -> None:
        if self.pins_data_dir is None or not trace.cites:
            return
        try:
            write_text_atomic(pin_path(self.pins_data_dir, trace.trace_id), json.dumps({"cites": [list(c) for c in trace.cites]}))
        except OSError as exc:  # a read-only data folder: the answer stands, the versions are not pinned
            log.warning("cannot pin the article versions of trace %s: %s", trace.trace_id, exc)

    def _unpin(self, trace: Trace) -> None:
        if self.pins_data_dir is not None and trace.cites:
            pin_path(self.pins_data_dir, trace.trace_id).unlink(missing_ok=True)

    def get(self, owner: str, trace_id: str) -> Trace | None:
        with self._lock:
            found = self._items.get(trace_id)
            if found is None or found[0] != owner:
                return None
            self._items.move_to_end(trace_id)
            return found[1]

    def __len__(self) -> int:
        return len(self._items)
