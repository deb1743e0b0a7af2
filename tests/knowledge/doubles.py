"""Scripted stand-ins for a chat model and chunks, so the knowledge rules are tested without a model."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from petrichor_core.models.protocols import ModelError

Script = Callable[..., dict[str, Any]]


def fails(op: str, reason: str = "boom") -> Script:
    def script(*_args: Any) -> dict[str, Any]:
        raise ModelError(op, reason)

    return script


def returns(reply: dict[str, Any]) -> Script:
    return lambda *_args: reply


class ScriptedChatModel:
    """Each operation runs its script with the request; an operation without a script is a test error."""

    fingerprint = "scripted:v1"

    def __init__(self, **scripts: Script):
        self.scripts = scripts
        self.calls: list[tuple[str, Any]] = []
        self._lock = threading.Lock()

    def _run(self, op: str, *args: Any) -> dict[str, Any]:
        with self._lock:
            self.calls.append((op, args[0]))
        if op not in self.scripts:
            raise AssertionError(f"unexpected model call {op}")
        return self.scripts[op](*args)

    def ops(self) -> list[str]:
        return [op for op, _ in self.calls]

    def generate_questions(self, chunks, ctx):
        return self._run("generate_questions", chunks, ctx)

    def extract_candidates(self, req, ctx):
        return self._run("extract_candidates", req, ctx)

    def plan_catalog(self, candidates, existing_folders, ctx):
        return self._run("plan_catalog", candidates, existing_folders, ctx)

    def generate_pages(self, req, ctx):
        return self._run("generate_pages", req, ctx)

    def summarize_tree(self, nodes, ctx):
        return self._run("summarize_tree", nodes, ctx)

    def answer(self, question, evidence, ctx):
        return self._run("answer", question, evidence, ctx)


@dataclass(frozen=True)
class Chunk:
    key: str
    position: int
    heading: str
    heading_path: tuple[str, ...]
    content: str
    start: int = 0
    end: int = 0


def chunk(i: int, content: str, heading: str = "", path: tuple[str, ...] = ()) -> Chunk:
    """Chunk number `i` (1-based key, 0-based position), titled `heading` or `节{i}`."""
    heading = heading or f"节{i}"
    return Chunk(f"chunk-{i:03d}", i - 1, heading, path or (heading,), content)
