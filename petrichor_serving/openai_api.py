"""The OpenAI-compatible API: `GET /v1/models` and `POST /v1/chat/completions`, with and without `stream`.

Any OpenAI client pointed at `<server>/v1` with a Petrichor API key as its key gets the agent's cited
answer. A model is a knowledge-base scope: `petrichor` is every knowledge base the key may read,
`petrichor/<kb_id>` one of them. The answer text carries `[n]` markers, so an unmodified client shows a
readable answer; the citations travel in the extension field `choices[0].message.citations` (streaming:
`choices[0].delta.citations` in the final chunk, the one with `finish_reason`). Errors use OpenAI's shape
`{"error": {"message", "type", "param", "code"}}`.

The agent composes and checks its answer before it has one (citations are verified after the tools ran),
so a stream sends the role at once and then the finished answer in pieces, with no pause between them.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from petrichor_serving import schema
from petrichor_serving.agent import loop
from petrichor_serving.endpoints import Call, json_body, principal_of
from petrichor_serving.errors import failure
from petrichor_serving.services import Services
from petrichor_serving.snapshot import Snapshot, describe_error

MODEL = "petrichor"
"""The model for the key's whole scope; `petrichor/<kb_id>` narrows it to one knowledge base."""
PIECE_CHARS = 24
"""A streamed content delta holds about this many characters (a `[n]` marker is never split)."""

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    413: ("invalid_request_error", "request_too_large"),
    503: ("server_error", "no_snapshot"),
}


class OpenAIError(Exception):
    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.param = status, message, param
        self.type, default_code = _ERROR_TYPES.get(status, ("server_error", None))
        self.code = code or default_code

    @classmethod
    def of(cls, exc: BaseException, *, param: str | None = None) -> OpenAIError:
        """An expected failure (`errors.failure`) in OpenAI's shape; anything else is a 500 whose message is
        the error's type and a path-free text, never a server path."""
        refused = failure(exc)
        return cls(refused.status, refused.message, param=param) if refused else cls(500, describe_error(exc))

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def _expected(exc: Exception) -> Exception:
    """`exc` as an `OpenAIError` when it is an expected failure; anything else propagates as it was."""
    return OpenAIError.of(exc) if failure(exc) else exc


def _error_response(exc: OpenAIError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)


async def _call(request: Request) -> Call:
    services: Services = request.app.state.services
    try:
        return Call(request, services, principal_of(services, request))
    except Exception as exc:
        raise _expected(exc) from None


def _snapshot(call: Call) -> Snapshot:
    try:
        return call.snapshot()
    except Exception as exc:
        raise _expected(exc) from None


def _created(call: Call) -> int:
    """A model's `created`: when the served snapshot was published."""
    try:
        return int(datetime.fromisoformat(_snapshot(call).manifest.created_at).timestamp())
    except (TypeError, ValueError):
        return 0


def visible_models(call: Call) -> list[str]:
    """`petrichor` plus one `petrichor/<kb_id>` per knowledge base the key can read in the current snapshot."""
    snap = _snapshot(call)
    readable = snap.recall.allowed_article_ids(call.scope(kb_ids=None))
    kbs = sorted({snap.articles[a]["kb_id"] for a in readable})
    return [MODEL, *(f"{MODEL}/{kb}" for kb in kbs)]


def _kb_ids(call: Call, model: str) -> list[str] | None:
    if model not in visible_models(call):
        raise OpenAIError(404, f"The model {model!r} does not exist or is not visible to this key", param="model")
    return None if model == MODEL else [model.split("/", 1)[1]]


async def list_models(request: Request) -> Response:
    try:
        call = await _call(request)
        created = _created(call)
        data = [{"id": m, "object": "model", "created": created, "owned_by": "petrichor"} for m in visible_models(call)]
        return JSONResponse({"object": "list", "data": data})
    except OpenAIError as exc:
        return _error_response(exc)


async def _request_body(request: Request) -> schema.ChatCompletionRequest:
    try:
        return schema.ChatCompletionRequest.model_validate(await json_body(request))
    except ValidationError as exc:
        loc = exc.errors(include_input=False)[0]["loc"]
        raise OpenAIError.of(exc, param=str(loc[0]) if loc else "messages") from None
    except Exception as exc:
        raise _expected(exc) from None


def _answer(call: Call, body: schema.ChatCompletionRequest, kb_ids: list[str] | None) -> dict[str, Any]:
    """The same agent entry point `/api/assistant/chat` uses, with the key's scope narrowed to the model."""
    doc = loop.answer(
        call.snapshot(),
        body.question(),
        call.scope(kb_ids=kb_ids),
        chat=call.services.chat,
        embedder=call.services.embedder,
        history=body.turns(),
        traces=call.services.traces,
        owner=call.owner,
    )
    doc.pop("trace")  # served at /api/traces/{trace_id}
    return doc


def _petrichor(doc: dict[str, Any]) -> dict[str, Any]:
    return {"trace_id": doc["trace_id"], "snapshot_version": doc["snapshot_version"], "stop_reason": doc["stop_reason"]}


def _completion(doc: dict[str, Any], model: str, created: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{doc['trace_id']}",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": doc["snapshot_version"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": doc["answer"], "citations": doc["citations"]},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "petrichor": _petrichor(doc),
    }


_TOKEN = re.compile(r"\[\d+\]|\s+|[^\s\[]+|\[")


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """`text` cut into deltas of about `size` characters at word boundaries; a `[n]` marker stays whole."""
    out: list[str] = []
    buf = ""
    for token in _TOKEN.findall(text):
        while len(token) > size and not token.startswith("["):  # a CJK run has no spaces: cut it
            room = max(size - len(buf), 1)
            buf, token = buf + token[:room], token[room:]
            out.append(buf)
            buf = ""
        buf += token
        if len(buf) >= size:
            out.append(buf)
            buf = ""
    if buf:
        out.append(buf)
    return out


def _sse(data: dict[str, Any] | str) -> bytes:
    return f"data: {data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def _stream(task: asyncio.Future[dict[str, Any]], model: str, created: int, stream_id: str) -> AsyncIterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return _sse({"id": stream_id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [choice], **extra})

    yield chunk({"role": "assistant", "content": ""})
    try:
        doc = await task
    except Exception as exc:  # headers are sent: the error travels as an event, as OpenAI's own does
        yield _sse(OpenAIError.of(exc).body())
        yield _sse("[DONE]")
        return
    for piece in pieces(doc["answer"]):
        yield chunk({"content": piece})
    yield chunk({"citations": doc["citations"]}, "stop", system_fingerprint=doc["snapshot_version"], petrichor=_petrichor(doc))
    yield _sse("[DONE]")


async def chat_completions(request: Request) -> Response:
    try:
        call = await _call(request)
        body = await _request_body(request)
        kb_ids = _kb_ids(call, body.model)
        created = int(time.time())
        task = asyncio.ensure_future(asyncio.to_thread(_answer, call, body, kb_ids))
        if body.stream:
            headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
            stream_id = f"chatcmpl-{uuid.uuid4().hex}"
            return StreamingResponse(_stream(task, body.model, created, stream_id), media_type="text/event-stream", headers=headers)
        try:
            doc = await task
        except Exception as exc:
            raise _expected(exc) from None
        return JSONResponse(_completion(doc, body.model, created))
    except OpenAIError as exc:
        return _error_response(exc)
