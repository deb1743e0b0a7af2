"""Scanned PDF pages to Markdown through an OpenAI-compatible vision model, and a disk cache in front of it.

Transcription is the one source step that calls a model, so its results are cached by the page image and
the model fingerprint: rescanning an unchanged PDF then costs no request and yields the same article version.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

from openai.types.chat import ChatCompletion

from petrichor_core.config import BuildLimits, ModelEndpoint
from petrichor_core.contract.files import write_text_atomic
from petrichor_core.models.protocols import ModelError, UsageMeter
from petrichor_core.models.transport import EndpointClient
from petrichor_core.versions import VISION_PROMPT_VERSION
from petrichor_pipeline.sources.pdf import PageTranscriber

OP = "source.vision"
"""The usage meter's name for transcription calls."""
PROMPT = (
    "Transcribe this document page to Markdown. Keep the original language and reading order; "
    "keep headings as #/## headings, lists as lists and tables as Markdown tables. "
    "Do not describe images, summarise or add commentary. Output the Markdown only."
)

_FENCED_REPLY = re.compile(r"\A```(?:markdown|md)?[ \t]*\n(.*)\n```[ \t]*\Z", re.DOTALL | re.IGNORECASE)


class TranscriptionError(Exception):
    """A page could not be transcribed after the transport's retries; the PDF reader turns it into a warning."""


class OpenAIPageTranscriber:
    """One chat-completions request per page with the PNG as a data-URL image.

    Requests go through the shared transport (`EndpointClient`): the run's concurrency limit, retries of
    connection errors, timeouts, 429 and 5xx up to `endpoint.max_retries` with backoff, and the usage
    meter; past that the page fails on its own.
    """

    def __init__(
        self,
        endpoint: ModelEndpoint,
        limits: BuildLimits | None = None,
        meter: UsageMeter | None = None,
        *,
        backoff_base_s: float = 1.0,
    ):
        self._model = endpoint.model
        self._client = EndpointClient(endpoint, limits or BuildLimits(), meter, backoff_base_s)

    @property
    def fingerprint(self) -> str:
        return f"{self._model}:vision-prompt-v{VISION_PROMPT_VERSION}"

    def transcribe(self, page_png: bytes, page_number: int) -> str:
        image_url = "data:image/png;base64," + base64.b64encode(page_png).decode("ascii")
        messages = [
            {"role": "system", "content": PROMPT},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"Page {page_number}."},
                    {"type": "image_url", "image_url": {"url": image_url}},
                ],
            },
        ]

        def send(client: Any) -> ChatCompletion:
            return client.chat.completions.create(model=self._model, messages=messages)

        def parse(reply: ChatCompletion) -> str:
            text = reply.choices[0].message.content if reply.choices else None
            if not text or not text.strip():
                raise ModelError(OP, "the model returned no text")
            return _unfence(text.strip())

        try:
            return self._client.call(OP, "", send, parse)
        except ModelError as exc:
            cause = exc.__cause__
            raise TranscriptionError(f"{type(cause).__name__}: {exc.reason}" if cause else exc.reason) from exc


class CachedPageTranscriber:
    """Keeps each successful transcription in `cache_dir`, keyed by sha256 of the fingerprint and the PNG."""

    def __init__(self, inner: PageTranscriber, fingerprint: str, cache_dir: Path):
        self._inner = inner
        self._fingerprint = fingerprint
        self._dir = cache_dir

    def transcribe(self, page_png: bytes, page_number: int) -> str:
        key = hashlib.sha256(self._fingerprint.encode("utf-8") + b"\0" + page_png).hexdigest()
        path = self._dir / key[:2] / f"{key}.md"
        if path.is_file():
            return path.read_text(encoding="utf-8")
        text = self._inner.transcribe(page_png, page_number)
        write_text_atomic(path, text)  # a model call costs far more than the fsync
        return text


def page_transcriber(
    endpoint: ModelEndpoint,
    cache_dir: Path | None = None,
    limits: BuildLimits | None = None,
    meter: UsageMeter | None = None,
) -> PageTranscriber | None:
    """The configured vision model (cached on disk when `cache_dir` is given), or None when none is set."""
    if not endpoint.configured:
        return None
    model = OpenAIPageTranscriber(endpoint, limits, meter)
    return model if cache_dir is None else CachedPageTranscriber(model, model.fingerprint, cache_dir)


def _unfence(text: str) -> str:
    """Models often wrap the whole reply in a ```markdown fence; the article wants what is inside."""
    match = _FENCED_REPLY.match(text)
    return match.group(1).strip() if match else text
