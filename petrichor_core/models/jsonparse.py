"""Recover the JSON object a chat model meant to send.

Models wrap their JSON in prose, in ```json fences, or encode it twice; the parser
tries a full parse, then a double-encoded string, then a streaming decode at
each `{`. A fenced block is tried before the streaming scan so that a `{` in the prose before it cannot win.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


class JSONReplyError(ValueError):
    """No JSON object could be recovered from a model reply."""


def parse_json_reply(text: str, accept: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    """The first JSON object found in `text`, trying the strictest reading first.

    With `accept` (a reply contract's check), the first object it accepts wins, so an example object in
    the prose before the real one cannot; when none is accepted the first object found is returned.
    """
    first: dict[str, Any] | None = None
    for obj in _objects(text):
        if accept is None or accept(obj):
            return obj
        first = first if first is not None else obj
    if first is not None:
        return first
    raise JSONReplyError(f"no JSON object in reply: {text[:120]!r}")


def _objects(text: str) -> Iterator[dict[str, Any]]:
    for candidate in _candidates(text):
        obj = _as_object(candidate)
        if obj is not None:
            yield obj
    for start in _object_starts(text):
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def _candidates(text: str) -> Iterator[str]:
    yield text.strip()
    for match in _FENCE.finditer(text):
        yield match.group(1).strip()


def _as_object(candidate: str) -> dict[str, Any] | None:
    """A whole-string parse; a JSON string holding JSON (double encoding) is unwrapped once more."""
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value.strip())
        except json.JSONDecodeError:
            return None
    return value if isinstance(value, dict) else None


def _object_starts(text: str) -> Iterator[int]:
    start = text.find("{")
    while start >= 0:
        yield start
        start = text.find("{", start + 1)
