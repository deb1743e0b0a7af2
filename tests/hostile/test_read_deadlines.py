"""Slow clients against a live `petrichor serve` on 127.0.0.1, over raw sockets: 32 connections that trickle
their headers or their body, byte by byte, are each answered 408 (or, answered before their body was in,
dropped) and disconnected once the read deadline passes, while they are still sending."""

from __future__ import annotations

import json
import selectors
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest

from tests.conftest import EMBED_CACHE
from tests.serving.live import petrichor_serve, serving_env

pytestmark = pytest.mark.slow  # a live server over the built bundled corpus

DEADLINE_S = 1.0
GIVE_UP_S = 20.0
"""Far past the deadline: a connection still open then is one the server kept."""
TRICKLE_S = 0.2


@dataclass
class SlowClient:
    kind: str
    sock: socket.socket
    pending: bytes
    """What it still has to send, a byte per tick (never all of it before the deadline)."""
    received: bytes = b""
    closed_after: float | None = None
    sent: int = field(default=0)


def _open(host: str, port: int, kind: str, head: bytes, pending: bytes) -> SlowClient:
    sock = socket.create_connection((host, port))
    sock.setblocking(False)
    if head:
        sock.send(head)
    return SlowClient(kind, sock, pending)


def _trickle(clients: list[SlowClient]) -> float:
    """Send each open client's next byte every `TRICKLE_S` and read what comes back until every connection is
    closed by the server; returns the seconds that took."""
    selector = selectors.DefaultSelector()
    for c in clients:
        selector.register(c.sock, selectors.EVENT_READ, c)
    started = next_tick = time.monotonic()
    open_ = set(range(len(clients)))
    while open_ and time.monotonic() - started < GIVE_UP_S:
        now = time.monotonic()
        if now >= next_tick:
            next_tick = now + TRICKLE_S
            for i in list(open_):
                c = clients[i]
                if c.sent < len(c.pending):
                    try:
                        c.sent += c.sock.send(c.pending[c.sent : c.sent + 1])
                    except OSError:  # the server closed it: the read below sees the end
                        pass
        for key, _ in selector.select(timeout=max(next_tick - time.monotonic(), 0.01)):
            c = key.data
            try:
                data = c.sock.recv(65536)
            except OSError:
                data = b""
            if data:
                c.received += data
                continue
            c.closed_after = time.monotonic() - started
            selector.unregister(c.sock)
            c.sock.close()
            open_.discard(clients.index(c))
    for i in open_:
        clients[i].sock.close()
    return time.monotonic() - started


def test_slow_headers_and_slow_bodies_are_cut_off_at_the_deadline(built_corpus, tmp_path) -> None:
    env = serving_env(built_corpus.data_dir, built_corpus.corpus_dir, EMBED_CACHE, tmp_path)
    args = ("--header-timeout", str(DEADLINE_S), "--body-timeout", str(DEADLINE_S))
    with petrichor_serve(env, args=args) as server:
        url = urlsplit(server.url)
        host, port = url.hostname, url.port
        body = b'{"query": "' + b"q" * 200 + b'"}'
        body_head = b"POST /api/knowledge/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        clients = (
            # the request line and headers a byte at a time, never finished in time
            [_open(host, port, "header", b"", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: y\r\n" * 50) for _ in range(8)]
            # connected, then silent
            + [_open(host, port, "idle", b"", b"") for _ in range(4)]
            # headers and a few header lines, then the rest of the headers a byte at a time
            + [_open(host, port, "header", b"POST /api/knowledge/search HTTP/1.1\r\n", b"Host: x\r\n" * 100) for _ in range(4)]
            # complete headers with a key, then the body a byte at a time
            + [_open(host, port, "body", body_head + b"Authorization: Bearer acme-key\r\n\r\n", body) for _ in range(12)]
            # no key: answered 401 at once; the body's trickle must not keep the connection
            + [_open(host, port, "unanswered-body", body_head + b"\r\n", body) for _ in range(4)]
        )
        assert len(clients) == 32
        _trickle(clients)

        kept = [c.kind for c in clients if c.closed_after is None]
        assert not kept, f"connections the server kept open: {kept}"
        for c in clients:
            assert c.closed_after >= DEADLINE_S * 0.9 or c.kind == "unanswered-body", (c.kind, c.closed_after)
            assert c.sent < len(c.pending) or not c.pending, c.kind  # cut off while still sending
            status = c.received.split(b"\r\n", 1)[0]
            assert status == (b"HTTP/1.1 401 Unauthorized" if c.kind == "unanswered-body" else b"HTTP/1.1 408 Request Timeout"), (
                c.kind,
                c.received[:200],
            )
            assert str(tmp_path).encode() not in c.received

        # the server still answers a prompt client on a fresh connection
        assert _exchange(host, port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").startswith(b"HTTP/1.1 200 ")
        # a request the HTTP parser refuses is answered in the API's JSON error shape too
        refused = _exchange(host, port, b"GET /api/snapshot?q=\x01\n HTTP/1.1\r\nHost: x\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 400 ") and b"content-type: application/json" in refused.lower()
        assert "error" in json.loads(refused.split(b"\r\n\r\n", 1)[1])


def _exchange(host: str, port: int, request: bytes) -> bytes:
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(request)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return reply
