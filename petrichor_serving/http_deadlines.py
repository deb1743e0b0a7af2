"""Read deadlines for HTTP connections: a client that sends its headers or its body too slowly is answered
408 and disconnected, so slow clients cannot hold connections (and the server's memory) for ever.

uvicorn bounds only the idle time between requests (`timeout_keep_alive`); neither its httptools nor its
h11 protocol bounds how long a request's headers or body may take to arrive. Two pieces close that gap:

- `HeaderDeadlineProtocol`, uvicorn's httptools protocol with a timer from the moment a connection opens
  (or a keep-alive connection's next request begins) until the request's headers are complete; it also
  closes a connection answered before its body was in, instead of reading the rest at the client's pace;
- `BodyDeadline`, an ASGI middleware bounding the time from the end of the headers until the whole body
  has been received, however the app reads it.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

ERROR_RESPONSE = b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"


@dataclass(frozen=True)
class ReadDeadlines:
    """How long a client may take to send a request's headers, and then its body (seconds)."""

    header_s: float = 10.0
    body_s: float = 30.0

    def __post_init__(self) -> None:
        if not (self.header_s > 0 and self.body_s > 0):
            raise ValueError("read deadlines must be positive numbers of seconds")


def _error_body(what: str, seconds: float) -> bytes:
    return json.dumps({"error": f"request {what} not received within {seconds:g} s"}).encode()


class HeaderDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing a connection whose request headers take longer than
    `header_s` to arrive. Build one per server with `with_deadline`."""

    header_s: float = ReadDeadlines.header_s

    @classmethod
    def with_deadline(cls, header_s: float) -> type[HeaderDeadlineProtocol]:
        return type(cls.__name__, (cls,), {"header_s": header_s})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def _arm_header_deadline(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_s, self._headers_too_slow)

    def _disarm_header_deadline(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:  # no response of an earlier request is under way
            body = _error_body("headers", self.header_s)
            self.transport.write(ERROR_RESPONSE % (b"408 Request Timeout", len(body), body))
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """A request the parser refuses (a control character in the URL, a broken header) gets the API's
        JSON error shape too, not uvicorn's plain text."""
        body = json.dumps({"error": msg}).encode()
        self.transport.write(ERROR_RESPONSE % (b"400 Bad Request", len(body), body))
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()  # a connection that never sends a byte is bounded too

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm_header_deadline()  # a keep-alive connection's next request

    def on_headers_complete(self) -> None:
        self._disarm_header_deadline()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        if self.cycle is not None and self.cycle.more_body and not self.transport.is_closing():
            # answered before its body was in (401, 413, 408): the rest of the body is not worth reading,
            # and a client trickling it must not keep the connection alive
            self.transport.close()  # uvicorn then arms no keep-alive and starts no pipelined request
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)


class _BodyTooSlow(Exception):
    pass


class BodyDeadline:
    """ASGI middleware: the request body must be complete within `body_s` of the request's start, else the
    reply is 408 with `connection: close` (the server then drops the connection) and the app's further
    messages are discarded. Once the body is in, `receive` waits without a deadline (a streaming response
    listens on it for the client's disconnect)."""

    def __init__(self, app: ASGIApp, body_s: float = ReadDeadlines.body_s):
        self.app = app
        self.body_s = body_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = time.monotonic() + self.body_s
        body_done = False
        started = timed_out = False

        async def bounded_receive() -> Message:
            nonlocal body_done, timed_out
            if body_done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                timed_out = True
                if not started:
                    body = _error_body("body", self.body_s)
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 408,
                            "headers": [
                                (b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close"),
                            ],
                        }
                    )
                    await send({"type": "http.response.body", "body": body})
                raise _BodyTooSlow from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if timed_out:
                return  # the 408 is the reply
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, bounded_receive, guarded_send)
        except _BodyTooSlow:
            pass
        except Exception:
            if not timed_out:
                raise
