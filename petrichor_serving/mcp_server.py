"""The MCP server: the four read-only knowledge tools for agents that speak the Model Context Protocol.

`knowledge_search`, `knowledge_outline`, `knowledge_read` and `knowledge_read_many` call the same
functions as `/api/knowledge/search|outline|read` (`agent/tools.py`), with the arguments checked by the same
request models (`schema`), so limits and error messages match the REST API. Scope comes from an API key
exactly as there: over streamable HTTP (`/mcp` in the app) the bearer token of each request; over stdio
(`petrichor mcp`) the key the process was started with.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Annotated, Any, AsyncIterator, Callable

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from petrichor_serving import schema
from petrichor_serving.agent import tools
from petrichor_serving.auth import LOCAL, Principal
from petrichor_serving.endpoints import HttpError, principal_of, validation_message
from petrichor_serving.services import Services

INSTRUCTIONS = (
    "Read-only access to a Petrichor knowledge base. Search returns locators and snippets, never full text; "
    "outline gives an article's section tree; read (or read_many, up to 4) returns the text of a locator. "
    "Quote what you read, with its chunk_id and article_version, when you answer."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

PrincipalOf = Callable[[Context], Principal]
KbIds = Annotated[list[str] | None, Field(description="limit to these knowledge bases (within the key's scope)")]


def _checked(model: type[BaseModel], arguments: dict[str, Any]) -> Any:
    try:
        return model.model_validate({k: v for k, v in arguments.items() if v is not None})
    except ValidationError as exc:
        raise McpToolError(validation_message(exc)) from None


async def _run(services: Services, fn: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
    snap = services.store.current
    if snap is None:
        raise McpToolError("no snapshot is loaded yet: run `petrichor build`")
    try:
        return await anyio.to_thread.run_sync(lambda: fn(snap, *args, **kwargs))
    except tools.ToolError as exc:
        raise McpToolError(str(exc)) from None


def build_server(services: Services, principal: PrincipalOf) -> MCPServer:
    """An MCP server over `services`; `principal(ctx)` says who makes each call."""
    server = MCPServer("petrichor", instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING")

    @server.tool(annotations=READ_ONLY)
    async def knowledge_search(
        query: Annotated[str, Field(description="what to look for, in the articles' language")],
        ctx: Context,
        kb_ids: KbIds = None,
        article_id: Annotated[str | None, Field(description="search inside this article only")] = None,
        limit: Annotated[int, Field(ge=1, description=f"at most {schema.MAX_RESULTS}")] = schema.DEFAULT_RESULTS,
        sub_queries: Annotated[list[str] | None, Field(description=f"extra phrasings, the first {schema.MAX_SUB_QUERIES} used")] = None,
    ) -> dict[str, Any]:
        """Hybrid search: locators (chunk_id, page_key, node_key), titles, heading paths, snippets, routes and scores."""
        body = _checked(schema.SearchRequest, {"query": query, "kb_ids": kb_ids, "article_id": article_id, "limit": limit, "sub_queries": sub_queries})
        scope = principal(ctx).scope(kb_ids=body.kb_ids, article_id=body.article_id)
        return await _run(services, tools.search, scope, body.query, embedder=services.embedder, limit=body.limit, sub_queries=body.sub_queries)

    @server.tool(annotations=READ_ONLY)
    async def knowledge_outline(
        article_id: Annotated[str, Field(description="an article_id from a search result")],
        ctx: Context,
        kb_ids: KbIds = None,
        max_nodes: Annotated[int, Field(description="10 to 300")] = schema.DEFAULT_OUTLINE_NODES,
    ) -> dict[str, Any]:
        """An article's section tree (PageIndex nodes, or a light tree from chunk headings), with the article version."""
        body = _checked(schema.OutlineRequest, {"article_id": article_id, "kb_ids": kb_ids, "max_nodes": max_nodes})
        return await _run(services, tools.outline, principal(ctx).scope(kb_ids=body.kb_ids), body.article_id, max_nodes=body.max_nodes)

    @server.tool(annotations=READ_ONLY)
    async def knowledge_read(
        ctx: Context,
        chunk_id: str | None = None,
        page_key: str | None = None,
        node_key: str | None = None,
        article_id: Annotated[str | None, Field(description="alone: the whole article")] = None,
        kb_id: Annotated[str | None, Field(description="the knowledge base of a page_key")] = None,
        kb_ids: KbIds = None,
        window: Annotated[schema.Window | None, Field(description="with chunk_id: the search candidate's `window`")] = None,
    ) -> dict[str, Any]:
        """Read one locator: exactly one of chunk_id, page_key, node_key, or article_id alone for the whole article."""
        locator = {"chunk_id": chunk_id, "page_key": page_key, "node_key": node_key, "article_id": article_id, "kb_id": kb_id}
        body = _checked(schema.ReadRequest, {**locator, "kb_ids": kb_ids, "window": window and window.model_dump()})
        return await _run(services, tools.read, principal(ctx).scope(kb_ids=body.kb_ids), body.target())

    @server.tool(annotations=READ_ONLY)
    async def knowledge_read_many(
        targets: Annotated[list[schema.Locator], Field(min_length=1, max_length=tools.MAX_READ_MANY, description="up to 4 locators")],
        ctx: Context,
        kb_ids: KbIds = None,
    ) -> dict[str, Any]:
        """Read up to four locators at once; a locator that cannot be read is listed under `failures`."""
        body = _checked(schema.ReadRequest, {"targets": [t.target() for t in targets], "kb_ids": kb_ids})
        return await _run(services, tools.read_many, principal(ctx).scope(kb_ids=body.kb_ids), [t.target() for t in body.targets])

    return server


def key_principal(services: Services, key: str | None) -> Principal:
    """Who a stdio server acts as: the key's principal; local mode (no key file) needs no key."""
    if services.keys is None:
        return LOCAL
    principal = services.keys.authenticate(f"Bearer {key}" if key else None)
    if principal is None:
        raise PermissionError("PETRICHOR_API_KEY is missing or not in the API key file (PETRICHOR_API_KEYS)")
    return principal


class HttpMcp:
    """The streamable-HTTP endpoint mounted at `/mcp`: a request without a valid key is refused with 401
    before the protocol sees it, and each tool call is scoped by its own request's bearer token."""

    def __init__(self, services: Services):
        self.services = services
        # local mode listens on 127.0.0.1 with no key: refuse other Host headers (DNS rebinding); with
        # keys every request carries its own credential, and the server may sit behind any host name
        self._security = TransportSecuritySettings(
            enable_dns_rebinding_protection=services.keys is None,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
        self._start()

    def _start(self) -> None:
        """A fresh server and session manager: the SDK's manager runs once, an app's lifespan may run again."""
        self.server = build_server(self.services, self._principal)
        self.server.streamable_http_app(stateless_http=True, transport_security=self._security)
        self._asgi = StreamableHTTPASGIApp(self.server.session_manager)

    def _principal(self, ctx: Context) -> Principal:
        if self.services.keys is None:
            return LOCAL
        headers = ctx.headers or {}
        principal = self.services.keys.authenticate(headers.get("authorization"))
        if principal is None:
            raise McpToolError("a valid API key is required (Authorization: Bearer <key>)")
        return principal

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        self._start()
        async with self.server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            principal_of(self.services, Request(scope))
        except HttpError as exc:
            await JSONResponse({"error": exc.message}, status_code=exc.status, headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        await self._asgi(scope, receive, send)


class _AppMcp:
    """The `/mcp` entry of the endpoint table: hands the request to the app's own `HttpMcp`."""

    __name__ = "mcp"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await scope["app"].state.mcp(scope, receive, send)


http_endpoint = _AppMcp()
