"""The MCP server: the four read-only knowledge tools for agents that speak the Model Context Protocol.

The tools are the declared ones (`tool_calls.TOOLS`): each publishes its request model's JSON schema as
`inputSchema` and checks its arguments with that model, then makes the same call as its HTTP endpoint
(`tool_calls.call_tool`), so limits and error messages match the REST API (`errors.failure`). Scope comes
from an API key exactly as there: over streamable HTTP (`/mcp` in the app) the bearer token of each
request; over stdio (`petrichor mcp`) the key the process was started with.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from mcp.server.mcpserver.tools import Tool as McpTool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from mcp.types.jsonrpc import INVALID_REQUEST
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from petrichor_serving import toolspec
from petrichor_serving.auth import LOCAL, Principal
from petrichor_serving.endpoints import HttpError, json_body, principal_of
from petrichor_serving.errors import failure, short_error
from petrichor_serving.schema import McpMessage
from petrichor_serving.services import Services
from petrichor_serving.tool_calls import TOOLS, Tool, call_tool

INSTRUCTIONS = (
    "Read-only access to a Petrichor knowledge base. Search returns locators and snippets, never full text; "
    "outline gives an article's section tree; read (or read_many, up to 4) returns the text of a locator. "
    "Quote what you read, with its chunk_id and article_version, when you answer."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

PrincipalOf = Callable[[Context], Principal]


class _Arguments(ArgModelBase):
    """The SDK's argument model, passing every argument through: the tool's own model checks them."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def _pre_parsed(model: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """A list or object sent as JSON text parsed, as the SDK does for its own tools (some clients send
    every structured argument that way); a string field's text is left as it is."""
    out = dict(arguments)
    for name, value in arguments.items():
        info = model.model_fields.get(name)
        if info is None or info.annotation is str or not isinstance(value, str):
            continue
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, (list, dict)):
            out[name] = parsed
    return out


def checked(spec: toolspec.ToolSpec, arguments: dict[str, Any]) -> Any:
    """The arguments as the tool's model reads them, JSON's usual coercions allowed (`"5"` is a limit of 5)."""
    return spec.arguments.model_validate(_pre_parsed(spec.arguments, arguments), strict=False)


def _tool(tool: Tool[Any], services: Services, principal: PrincipalOf) -> McpTool:
    spec = tool.spec

    async def run(ctx: Context, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            body = checked(spec, arguments)
            who = principal(ctx)
            snap = services.store.current
            if snap is None:
                raise HttpError(503, "no snapshot is loaded yet: run `petrichor build`")
            return await anyio.to_thread.run_sync(lambda: call_tool(tool, snap, who.scope, body, services.embedder))
        except Exception as exc:
            if (refused := failure(exc)) is None:
                raise
            raise McpToolError(refused.message) from None

    run.__name__ = spec.name  # names the output schema, `<name>DictOutput`
    published = McpTool.from_function(run, name=spec.name, description=spec.description, annotations=READ_ONLY)
    published.fn_metadata.arg_model = _Arguments
    published.parameters = spec.input_schema()
    return published


def build_server(services: Services, principal: PrincipalOf, tools: Sequence[Tool[Any]] = TOOLS) -> MCPServer:
    """An MCP server over `services` with the declared tools; `principal(ctx)` says who makes each call."""
    return MCPServer(
        "petrichor",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        log_level="WARNING",
        tools=[_tool(t, services, principal) for t in tools],
    )


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
    before the protocol sees it, a POST body that is not one JSON-RPC message is refused with a JSON-RPC
    error, and each tool call is scoped by its own request's bearer token."""

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
            raise HttpError(401, "a valid API key is required (Authorization: Bearer <key>)")
        return principal

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        self._start()
        async with self.server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            principal_of(self.services, request)
        except HttpError as exc:
            await JSONResponse({"error": exc.message}, status_code=exc.status, headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        if request.method == "POST":
            try:
                receive = await _checked_message(request)
            except HttpError as exc:
                error = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": short_error(exc.message)}}
                await JSONResponse(error, status_code=exc.status)(scope, receive, send)
                return
        await self._asgi(scope, receive, send)


async def _checked_message(request: Request) -> Receive:
    """The POST body checked as `/openapi.json` states it: JSON of at most `MAX_BODY_BYTES` holding one
    JSON-RPC message (`schema.McpMessage`) of JSON's own types, strictly (the SDK would take `"5"` or `true`
    for an error code); then the message is handed to the SDK as the body."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise HttpError(415, "Content-Type must be application/json")
    data = await json_body(request)
    try:
        McpMessage.model_validate(data, strict=True)
    except ValidationError:
        raise HttpError(400, "not a JSON-RPC 2.0 message: a request, notification, result or error") from None
    body = json.dumps(data).encode()
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if delivered:
            return await request.receive()  # the client leaving
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


class _AppMcp:
    """The `/mcp` entry of the endpoint table: hands the request to the app's own `HttpMcp`."""

    __name__ = "mcp"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await scope["app"].state.mcp(scope, receive, send)


http_endpoint = _AppMcp()
