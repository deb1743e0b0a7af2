"""The HTTP API: an app factory, a route table, and thin handlers over the agent tools.

Private endpoints take the scope from the API key (or local mode when no key file is configured);
`/api/public/qa/chat` is anonymous and sees only public, unexpired, password-free shares.
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from petrichor_pipeline.config import Settings
from petrichor_serving.agent import loop, tools
from petrichor_serving.auth import LOCAL, KeyStore, Principal, public_scope
from petrichor_serving.openapi import openapi_document
from petrichor_serving.snapshot import Snapshot, SnapshotStore

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 512 * 1024
MAX_QUESTION_CHARS = 8000


class HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Services:
    settings: Settings
    store: SnapshotStore
    keys: KeyStore | None
    chat: Any
    embedder: Any


async def _json_body(request: Request) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise HttpError(413, f"request body over {MAX_BODY_BYTES} bytes")
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise HttpError(413, f"request body over {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HttpError(400, f"body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise HttpError(400, "body must be a JSON object")
    return data


def _services(request: Request) -> Services:
    return request.app.state.services


def _snapshot(request: Request) -> Snapshot:
    snap = _services(request).store.current
    if snap is None:
        raise HttpError(503, "no snapshot is loaded yet: run `petrichor build`")
    return snap


def _principal(request: Request) -> Principal:
    keys = _services(request).keys
    if keys is None:
        return LOCAL
    principal = keys.authenticate(request.headers.get("authorization"))
    if principal is None:
        raise HttpError(401, "a valid API key is required (Authorization: Bearer <key>)")
    return principal


def _str_list(data: dict[str, Any], *names: str) -> list[str] | None:
    for name in names:
        v = data.get(name)
        if v is None:
            continue
        if isinstance(v, str):
            return [v]
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return v
        raise HttpError(400, f"{name} must be a string or a list of strings")
    return None


def _limit(data: dict[str, Any], default: int = 10) -> int:
    raw = data.get("limit", default)
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < 1:
        raise HttpError(400, "limit must be a positive integer")
    return min(raw, 20)


def _text(data: dict[str, Any], *names: str, max_chars: int = MAX_QUESTION_CHARS) -> str:
    for name in names:
        v = data.get(name)
        if isinstance(v, str) and v.strip():
            if len(v) > max_chars:
                raise HttpError(400, f"{name} is longer than {max_chars} characters")
            return v.strip()
    raise HttpError(400, f"{names[0]} must be a non-empty string")


def _handler(fn: Callable[[Request], Awaitable[Any]]) -> Callable[[Request], Awaitable[JSONResponse]]:
    async def wrapped(request: Request) -> JSONResponse:
        try:
            return JSONResponse(await fn(request))
        except HttpError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        except tools.ToolError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)

    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped


@_handler
async def healthz(request: Request) -> dict[str, Any]:
    snap = _services(request).store.current
    return {"status": "ok", "snapshot_version": snap.version if snap else None}


@_handler
async def snapshot_status(request: Request) -> dict[str, Any]:
    return _services(request).store.status()


@_handler
async def knowledge_search(request: Request) -> dict[str, Any]:
    data = await _json_body(request)
    principal = _principal(request)
    snap = _snapshot(request)
    query = _text(data, "query")
    scope = principal.scope(kb_ids=_str_list(data, "kb_ids", "knowledge_base_id"), article_id=data.get("article_id"))
    subs = _str_list(data, "sub_queries", "subQueries")
    svc = _services(request)
    return await asyncio.to_thread(
        tools.search, snap, scope, query, embedder=svc.embedder, limit=_limit(data), sub_queries=subs[:3] if subs else None
    )


@_handler
async def knowledge_outline(request: Request) -> dict[str, Any]:
    data = await _json_body(request)
    principal = _principal(request)
    snap = _snapshot(request)
    article_id = _text(data, "article_id", "articleId")
    max_nodes = data.get("max_nodes", 120)
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool):
        raise HttpError(400, "max_nodes must be an integer")
    return tools.outline(snap, principal.scope(kb_ids=_str_list(data, "kb_ids", "knowledge_base_id")), article_id, max_nodes=max_nodes)


@_handler
async def knowledge_read(request: Request) -> dict[str, Any]:
    data = await _json_body(request)
    principal = _principal(request)
    snap = _snapshot(request)
    scope = principal.scope(kb_ids=_str_list(data, "kb_ids"))
    targets = data.get("targets", data.get("nodes"))
    if targets is not None:
        if not isinstance(targets, list) or not all(isinstance(t, dict) for t in targets):
            raise HttpError(400, "targets must be a list of locator objects")
        return tools.read_many(snap, scope, targets)
    return {"results": [tools.read(snap, scope, data)], "requested_count": 1, "skipped_count": 0, "failures": []}


async def _chat(request: Request, public: bool) -> dict[str, Any]:
    data = await _json_body(request)
    question = _text(data, "question", "message")
    svc = _services(request)
    snap = _snapshot(request)
    kb_ids = _str_list(data, "kb_ids", "knowledge_base_id")
    if public:
        scope = public_scope(kb_ids=kb_ids)
    else:
        scope = _principal(request).scope(kb_ids=kb_ids, article_id=data.get("article_id"))
    return await asyncio.to_thread(loop.answer, snap, question, scope, chat=svc.chat, embedder=svc.embedder)


@_handler
async def assistant_chat(request: Request) -> dict[str, Any]:
    return await _chat(request, public=False)


@_handler
async def public_chat(request: Request) -> dict[str, Any]:
    return await _chat(request, public=True)


async def openapi(request: Request) -> JSONResponse:
    return JSONResponse(openapi_document())


ROUTES = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/api/snapshot", snapshot_status, methods=["GET"]),
    Route("/api/knowledge/search", knowledge_search, methods=["POST"]),
    Route("/api/knowledge/outline", knowledge_outline, methods=["POST"]),
    Route("/api/knowledge/read", knowledge_read, methods=["POST"]),
    Route("/api/assistant/chat", assistant_chat, methods=["POST"]),
    Route("/api/public/qa/chat", public_chat, methods=["POST"]),
    Route("/openapi.json", openapi, methods=["GET"]),
]


def create_app(services: Services, *, watch: bool = True) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette):
        services.store.refresh()
        if watch:
            services.store.watch(services.settings.reload_interval_s)
        yield
        services.store.stop()

    app = Starlette(routes=ROUTES, lifespan=lifespan)
    app.state.services = services
    return app


def build_services(settings: Settings) -> Services:
    """Wire the store, the key file and the models from settings; loads jieba and the embedder once."""
    from petrichor_pipeline.models.factory import make_chat_model, make_embedder
    from petrichor_pipeline.text.tokenize import init_jieba

    init_jieba()
    keys = KeyStore.load(settings.api_keys_file) if settings.api_keys_file else None
    embedder, fingerprint = None, None
    if settings.embed_enabled:
        embedder = make_embedder(settings)
        try:
            fingerprint = embedder.fingerprint
        except Exception as exc:  # an unreachable endpoint: serve lexical routes only
            log.warning("embedder unavailable, vector routes off: %s", exc)
            embedder = None
    store = SnapshotStore(settings.data_dir, embed_fingerprint=fingerprint)
    return Services(settings=settings, store=store, keys=keys, chat=make_chat_model(settings), embedder=embedder)
