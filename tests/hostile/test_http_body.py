"""Request bodies are bounded while they stream in, and bad JSON of any shape is a 400."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from petrichor_serving.app import create_app
from petrichor_serving.schema import MAX_BODY_BYTES
from petrichor_serving.services import Services, ServingSettings
from petrichor_serving.snapshot import SnapshotStore

PIECE = 64 * 1024


def _app(tmp_path: Path):
    # No snapshot and no model: these requests must be answered before a handler would need either.
    services = Services(settings=ServingSettings(data_dir=tmp_path), store=SnapshotStore(tmp_path), keys=None, chat=None, embedder=None)  # type: ignore[arg-type]
    return create_app(services, watch=False)


def _post(app, body_pieces, headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes, int]:
    """POST /api/knowledge/search at the ASGI level; returns (status, body, bytes the app pulled)."""
    pulled = 0
    pieces = iter(body_pieces)
    sent: list[dict] = []

    async def receive() -> dict:
        nonlocal pulled
        piece = next(pieces, None)
        if piece is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        pulled += len(piece)
        return {"type": "http.request", "body": piece, "more_body": True}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/knowledge/search",
        "raw_path": b"/api/knowledge/search",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], body, pulled


def test_a_chunked_body_stops_being_read_at_the_cap(tmp_path: Path) -> None:
    endless = (b"x" * PIECE for _ in range(300 * 1024 * 1024 // PIECE))  # 300 MB, no Content-Length
    status, body, pulled = _post(_app(tmp_path), endless, [(b"transfer-encoding", b"chunked")])
    assert status == 413 and "over" in json.loads(body)["error"]
    assert pulled <= MAX_BODY_BYTES + PIECE


def test_a_declared_oversized_body_is_refused_unread(tmp_path: Path) -> None:
    status, _, pulled = _post(_app(tmp_path), [b"{}"] * 10, [(b"content-length", str(MAX_BODY_BYTES + 1).encode())])
    assert status == 413 and pulled == 0


@pytest.mark.parametrize(
    "raw",
    [b"[" * 100_000 + b"]" * 100_000, b'{"limit": ' + b"9" * 100_000 + b"}", b"\xff\xfe{}", b'{"query": "m"', b"[]", b"null", b'"\\ud800 m"'],
    ids=["deep-nesting", "huge-integer", "not-utf8", "truncated", "array", "null", "bare-string"],
)
def test_malformed_json_is_a_short_400(tmp_path: Path, raw: bytes) -> None:
    status, body, _ = _post(_app(tmp_path), [raw], [])
    assert status == 400, body[:300]
    assert len(json.loads(body)["error"]) <= 200


def test_a_body_that_stops_arriving_is_a_408_that_closes_the_connection(tmp_path: Path) -> None:
    """The body deadline holds whoever reads the body: the app waits on `receive`, the deadline answers."""
    from petrichor_serving.http_deadlines import ReadDeadlines

    services = Services(settings=ServingSettings(data_dir=tmp_path), store=SnapshotStore(tmp_path), keys=None, chat=None, embedder=None)  # type: ignore[arg-type]
    app = create_app(services, watch=False, deadlines=ReadDeadlines(body_s=0.2))
    sent: list[dict] = []
    first = True

    async def receive() -> dict:
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": b'{"query": ', "more_body": True}
        await asyncio.sleep(3600)  # the client sends nothing more
        raise AssertionError("unreachable")

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/knowledge/search",
        "raw_path": b"/api/knowledge/search",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"100")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    start = next(m for m in sent if m["type"] == "http.response.start")
    assert start["status"] == 408 and (b"connection", b"close") in start["headers"]
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]  # nothing after the 408
    assert "body" in json.loads(sent[1]["body"])["error"]
