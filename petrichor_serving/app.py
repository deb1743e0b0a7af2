"""The HTTP API: an app factory, the endpoint table, and thin handlers over the agent and the knowledge tools.

Private endpoints take the scope from the API key (or local mode when no key file is configured);
`/api/public/qa/chat` is anonymous and sees only public, unexpired, password-free shares. An endpoint
is one handler here plus one line in `ENDPOINTS`; its request and response models live in `schema`. The
knowledge tools' endpoints are generated from their declarations (`tool_calls.TOOLS`, `tool_endpoints`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse

from petrichor_serving import articles, openai_api, schema, webpage
from petrichor_serving.agent import loop
from petrichor_serving.auth import LOCAL
from petrichor_serving.endpoints import Call, Endpoint, HttpError, openapi_document, routes
from petrichor_serving.history import CitationRef, resolve_citation
from petrichor_serving.http_deadlines import BodyDeadline, ReadDeadlines
from petrichor_serving.mcp_server import HttpMcp, http_endpoint
from petrichor_serving.recall.access import Scope
from petrichor_serving.services import Services
from petrichor_serving.snapshot import Snapshot
from petrichor_serving.tool_calls import TOOLS, Http, Tool, call_tool


async def healthz(call: Call) -> dict[str, Any] | JSONResponse:
    """200 `ok` only while the snapshot `CURRENT` names is served; 503 `degraded` with the reason otherwise."""
    health = call.services.store.health()
    if health.ok:
        return {"status": "ok", "snapshot_version": health.snapshot_version}
    return JSONResponse({"status": "degraded", "reason": health.reason, "snapshot_version": health.snapshot_version}, status_code=503)


async def snapshot_status(call: Call) -> dict[str, Any]:
    """Anonymous: the versions served and refused, nothing more (the snapshot holds every tenant, so its row
    counts are not public). With a key: the full status, row counts within the key's scope."""
    store = call.services.store
    status = "ok" if store.health().ok else "degraded"
    if call.principal is None:
        doc = store.status()
        current, refused = doc["current"], doc["refused"]
        return {
            "status": status,
            "current": current and {"version": current["version"], "created_at": current["created_at"]},
            "refused": refused and {"version": refused["version"]},
            "pointer": doc["pointer"],
        }
    rows = None if call.principal is LOCAL else (lambda snap: _scoped_rows(snap, call.scope(kb_ids=None)))
    return {"status": status, **store.status(rows=rows)}


def _scoped_rows(snap: Snapshot, scope: Scope) -> dict[str, int]:
    readable = snap.recall.allowed_article_ids(scope)
    return {"articles": len(readable), "chunks": sum(len(snap.chunks_by_article.get(a, ())) for a in readable)}


def tool_endpoints(tools: Iterable[Tool[Any]]) -> list[Endpoint]:
    """The knowledge tools' endpoints: one `POST` per tool with an HTTP binding (`tool_calls.Http`), its
    operation named by the tool; a request with `snapshot_version` may name a retained snapshot."""
    return [_tool_endpoint(t, t.http) for t in tools if t.http is not None]


def _tool_endpoint(tool: Tool[Any], http: Http) -> Endpoint:
    serve = http.serve or partial(call_tool, tool)

    async def handler(call: Call, body: Any) -> dict[str, Any]:
        snap = call.snapshot(getattr(body, "snapshot_version", None))
        return await asyncio.to_thread(serve, snap, call.scope, body, call.services.embedder)

    handler.__name__ = tool.name
    return Endpoint("POST", http.path, handler, http.summary, http.response, http.request)


async def _answer(call: Call, body: schema.ChatRequest, *, public: bool) -> dict[str, Any]:
    snap = call.snapshot(body.snapshot_version)
    if public and snap is not call.services.store.current:
        # an older snapshot may still hold shares withdrawn since: public answers read today's shares only
        raise HttpError(400, "public answers use the current snapshot only")
    scope = call.scope(kb_ids=body.kb_ids, article_id=None if public else body.article_id)
    doc = await asyncio.to_thread(
        loop.answer,
        snap,
        body.question,
        scope,
        chat=call.services.chat,
        embedder=call.services.embedder,
        history=body.turns(),
        public=public,
        traces=call.services.traces,
        owner=call.owner,
    )
    doc.pop("trace")  # served at /api/traces/{trace_id}
    return doc


async def chat(call: Call, body: schema.ChatRequest) -> dict[str, Any]:
    return await _answer(call, body, public=False)


async def public_chat(call: Call, body: schema.ChatRequest) -> dict[str, Any]:
    return await _answer(call, body, public=True)


async def trace(call: Call) -> dict[str, Any]:
    found = call.services.traces.get(call.owner, call.request.path_params["trace_id"])
    if found is None:
        raise HttpError(404, "trace not found")
    return found.to_json()


async def snapshots(call: Call) -> dict[str, Any]:
    return call.services.retained.listing()


async def _resolve(call: Call, query: schema.CitationQuery) -> dict[str, Any]:
    ref = CitationRef(query.article_id, query.article_version, query.start, query.end)
    scope = call.scope(kb_ids=None)
    return resolve_citation(call.services.store, call.services.store.current, scope, ref)


async def citation_resolve(call: Call, query: schema.CitationQuery) -> dict[str, Any]:
    return await _resolve(call, query)


async def public_citation_resolve(call: Call, query: schema.CitationQuery) -> dict[str, Any]:
    return await _resolve(call, query)


async def article(call: Call, query: schema.ArticleQuery) -> dict[str, Any]:
    return await articles.article(call)  # reads `chunk_id` from the request itself, once checked here


async def public_article(call: Call, query: schema.ArticleQuery) -> dict[str, Any]:
    return await articles.public_article(call)


async def openapi(call: Call) -> dict[str, Any]:
    return OPENAPI


ENDPOINTS: list[Endpoint] = [
    Endpoint(
        "GET",
        "/healthz",
        healthz,
        "Liveness and the served snapshot version",
        schema.HealthResponse,
        secured=False,
        replies=((503, "Degraded: no snapshot, or not the one CURRENT names (refused; a fallback may serve)"),),
    ),
    Endpoint(
        "GET",
        "/api/snapshot",
        snapshot_status,
        "Current and refused snapshot versions; with a key also row counts within its scope",
        schema.SnapshotStatusResponse,
        secured=False,
        key_optional=True,
    ),
    *tool_endpoints(TOOLS),
    Endpoint("POST", "/api/assistant/chat", chat, "Cited answer over the key's knowledge bases", schema.AnswerResponse, schema.ChatRequest),
    Endpoint(
        "POST",
        "/api/public/qa/chat",
        public_chat,
        "Cited answer over public shares only (at most 8 tool steps)",
        schema.AnswerResponse,
        schema.ChatRequest,
        secured=False,
    ),
    Endpoint(
        "GET",
        "/api/articles/{article_id}",
        article,
        "One article's text, versions and (`?chunk_id=`) heading path, within the key's scope",
        schema.ArticleResponse,
        query=schema.ArticleQuery,
    ),
    Endpoint(
        "GET",
        "/api/public/articles/{article_id}",
        public_article,
        "One public share's text and versions (anonymous)",
        schema.ArticleResponse,
        query=schema.ArticleQuery,
        secured=False,
    ),
    Endpoint(
        "GET",
        "/api/traces/{trace_id}",
        trace,
        "One agent run: tool calls, locators, timings, stop reason (its own caller only)",
        schema.TraceResponse,
    ),
    Endpoint("GET", "/api/snapshots", snapshots, "The retained snapshots a search or chat may name as `snapshot_version`", schema.SnapshotsResponse),
    Endpoint(
        "GET",
        "/api/citations/resolve",
        citation_resolve,
        "The exact text a citation quoted, from its article version (also after the article changed)",
        schema.CitationResponse,
        query=schema.CitationQuery,
    ),
    Endpoint(
        "GET",
        "/api/public/citations/resolve",
        public_citation_resolve,
        "A citation's quoted text, for articles shared publicly today",
        schema.CitationResponse,
        query=schema.CitationQuery,
        secured=False,
    ),
    Endpoint(
        "GET",
        "/v1/models",
        openai_api.list_models,
        "OpenAI-compatible: the key's knowledge-base scopes as models",
        schema.ModelListResponse,
        raw=True,
        error=schema.OpenAIErrorResponse,
    ),
    Endpoint(
        "POST",
        "/v1/chat/completions",
        openai_api.chat_completions,
        "OpenAI-compatible cited answer, streamed with `stream: true`; citations in `choices[0].message.citations`",
        schema.ChatCompletionResponse,
        schema.ChatCompletionRequest,
        raw=True,
        error=schema.OpenAIErrorResponse,
    ),
    Endpoint(
        "POST",
        "/mcp",
        http_endpoint,
        f"MCP over streamable HTTP: {', '.join(t.name for t in TOOLS)}",
        schema.McpMessage,
        schema.McpMessage,
        raw=True,
        error=schema.McpMessage,
    ),
    Endpoint(
        "GET",
        "/mcp",
        http_endpoint,
        "MCP over streamable HTTP: the server-to-client event stream",
        schema.McpMessage,
        raw=True,
        error=schema.McpMessage,
    ),
    Endpoint("GET", "/openapi.json", openapi, "This document", schema.OpenAPIResponse, secured=False),
]
OPENAPI = openapi_document(ENDPOINTS)
for _method, _responses in schema.MCP_RESPONSES.items():  # MCP's transport answers in its own content types
    OPENAPI["paths"]["/mcp"][_method]["responses"] = _responses


def create_app(services: Services, *, watch: bool = True, deadlines: ReadDeadlines = ReadDeadlines()) -> Starlette:
    """The app; `deadlines.body_s` bounds every request body's arrival (the header deadline belongs to the
    server's protocol: `http_deadlines.HeaderDeadlineProtocol`)."""
    mcp = HttpMcp(services)

    @asynccontextmanager
    async def lifespan(app: Starlette):
        services.store.refresh()
        if watch:
            services.store.watch(services.settings.reload_interval_s)
        async with mcp.lifespan():
            yield
        services.store.stop()

    app = Starlette(
        routes=[*routes(ENDPOINTS), *webpage.routes()],
        lifespan=lifespan,
        middleware=[Middleware(BodyDeadline, body_s=deadlines.body_s)],
    )
    app.state.services = services
    app.state.mcp = mcp
    return app
