"""A real OpenAI-compatible HTTP server on 127.0.0.1 that plays back scripted replies.

The client under test is the genuine `openai` package talking HTTP, so timeouts, status codes and
reply parsing behave as they do against a live endpoint.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT = "/v1/chat/completions"
EMBEDDINGS = "/v1/embeddings"


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def chat_reply(content: str, prompt_tokens: int = 11, completion_tokens: int = 7, **kw: Any) -> Reply:
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }
    return Reply(body=body, **kw)


def embedding_reply(vectors: list[list[float]], **kw: Any) -> Reply:
    body = {
        "object": "list",
        "model": "test-embed",
        "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
        "usage": {"prompt_tokens": 3 * len(vectors), "total_tokens": 3 * len(vectors)},
    }
    return Reply(body=body, **kw)


def error_reply(status: int, message: str = "scripted error", **kw: Any) -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": "test", "code": None}}, **kw)


class FakeOpenAI:
    """Serves queued `Reply`s per path; records every request body; tracks peak concurrency.

    `gate`, when set, sees each request first and may answer it instead of the queue (an endpoint that
    refuses a request field, say), leaving the queued replies for the requests it lets through.
    """

    def __init__(self) -> None:
        self.replies: dict[str, deque[Reply]] = {CHAT: deque(), EMBEDDINGS: deque()}
        self.gate: Callable[[str, dict[str, Any]], Reply | None] | None = None
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, path: str, *replies: Reply) -> None:
        self.replies[path].extend(replies)

    def calls(self, path: str) -> list[dict[str, Any]]:
        return [body for p, body in self.requests if p == path]

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, path: str, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append((path, body))
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            refused = self.gate(path, body) if self.gate else None
            if refused is not None:
                return refused
            queue = self.replies.get(path)
            return queue.popleft() if queue else error_reply(500, f"no scripted reply left for {path}")

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = fake._next(self.path, body)
                try:
                    time.sleep(reply.delay_s)
                finally:
                    # Counted out before the reply leaves: once the client has read it, it may send its next
                    # request before this thread has finished writing, which would count both at once.
                    fake._done()
                try:
                    payload = reply.body if isinstance(reply.body, (str, bytes)) else json.dumps(reply.body)
                    data = payload.encode() if isinstance(payload, str) else payload
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        return Handler
