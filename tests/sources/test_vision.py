"""The vision transcriber against a small OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from petrichor_core.config import ModelEndpoint
from petrichor_pipeline.sources.corpus import scan_corpus
from petrichor_pipeline.sources.vision import (
    CachedPageTranscriber,
    OpenAIPageTranscriber,
    TranscriptionError,
    page_transcriber,
)

from .helpers import three_page_pdf, write

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class VisionServer:
    base_url: str
    requests: list[dict] = field(default_factory=list)
    reply: str = "## Scanned section\n\nText read from the image."
    status: int = 200


@pytest.fixture
def vision_server() -> Iterator[VisionServer]:
    state = VisionServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"path": self.path, "body": body})
            if state.status != 200:
                payload = {"error": {"message": "overloaded", "type": "server_error"}}
            else:
                payload = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": state.reply}}],
                }
            data = json.dumps(payload).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def endpoint(server: VisionServer, retries: int = 0) -> ModelEndpoint:
    return ModelEndpoint(base_url=server.base_url, model="vision-test", api_key="k", timeout_s=10, max_retries=retries)


def test_scan_with_the_vision_model_puts_page_two_between_one_and_three(corpus: Path, vision_server: VisionServer):
    write(corpus, "kb/manual.pdf", three_page_pdf())
    scan = scan_corpus(corpus, pdf_transcriber=OpenAIPageTranscriber(endpoint(vision_server)))
    assert scan.errors == ()
    (art,) = scan.articles
    assert art.warnings == ()
    content = art.content
    assert content.index("Then start the service") < content.index("## Scanned section") < content.index("Operations: restart")
    (request,) = vision_server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "vision-test"
    parts = request["body"]["messages"][-1]["content"]
    image_url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    assert image_url.startswith("data:image/png;base64,")
    assert base64.b64decode(image_url.split(",", 1)[1]).startswith(PNG_MAGIC)
    assert any(p["type"] == "text" and "Page 2" in p["text"] for p in parts)


def test_a_fenced_reply_is_unwrapped(vision_server: VisionServer):
    vision_server.reply = "```markdown\n# Title\n\nBody\n```"
    assert OpenAIPageTranscriber(endpoint(vision_server)).transcribe(PNG_MAGIC, 1) == "# Title\n\nBody"


def test_server_errors_are_retried_then_become_a_page_warning(corpus: Path, vision_server: VisionServer):
    vision_server.status = 500
    write(corpus, "kb/manual.pdf", three_page_pdf())
    with pytest.raises(TranscriptionError, match="InternalServerError"):
        OpenAIPageTranscriber(endpoint(vision_server, retries=1)).transcribe(PNG_MAGIC, 2)
    assert len(vision_server.requests) == 2
    (art,) = scan_corpus(corpus, pdf_transcriber=OpenAIPageTranscriber(endpoint(vision_server))).articles
    (warning,) = art.warnings
    assert warning.startswith("page 2: transcription failed (InternalServerError")
    assert "Operations: restart" in art.content


def test_an_empty_reply_is_a_failure(vision_server: VisionServer):
    vision_server.reply = "  \n"
    with pytest.raises(TranscriptionError, match="no text"):
        OpenAIPageTranscriber(endpoint(vision_server)).transcribe(PNG_MAGIC, 1)


def test_cached_transcriber_asks_the_model_once_per_page_image(tmp_path: Path, vision_server: VisionServer):
    cache = tmp_path / "vision-cache"
    first = page_transcriber(endpoint(vision_server), cache_dir=cache)
    assert isinstance(first, CachedPageTranscriber)
    assert first.transcribe(PNG_MAGIC + b"page-a", 1) == vision_server.reply
    vision_server.reply = "a different answer"
    again = page_transcriber(endpoint(vision_server), cache_dir=cache)
    assert again.transcribe(PNG_MAGIC + b"page-a", 1) != "a different answer"
    assert again.transcribe(PNG_MAGIC + b"page-b", 1) == "a different answer"
    assert len(vision_server.requests) == 2


def test_cached_transcriber_does_not_keep_failures(tmp_path: Path, vision_server: VisionServer):
    vision_server.status = 500
    cached = page_transcriber(endpoint(vision_server), cache_dir=tmp_path)
    with pytest.raises(TranscriptionError):
        cached.transcribe(PNG_MAGIC, 1)
    vision_server.status = 200
    assert cached.transcribe(PNG_MAGIC, 1) == vision_server.reply
    assert len(vision_server.requests) == 2


def test_no_endpoint_means_no_transcriber():
    assert page_transcriber(ModelEndpoint()) is None
