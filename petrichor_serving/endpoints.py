"""An endpoint is one handler plus one `Endpoint` line: the route, the body check and its OpenAPI entry.

`Endpoint.route()` authenticates when the endpoint is secured, then reads and validates the body against
the endpoint's request model (`schema`), and renders failures (`errors.failure`) as `{"error": ...}`
replies: a caller without a key learns nothing of what a valid body looks like. `openapi_document()` writes the same declarations out
as OpenAPI 3.1, path parameters included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from petrichor_serving.auth import LOCAL, Principal, public_scope
from petrichor_serving.errors import ServiceError, failure, short_error
from petrichor_serving.recall.access import Scope
from petrichor_serving.schema import MAX_BODY_BYTES, ErrorResponse
from petrichor_serving.services import Services
from petrichor_serving.snapshot import Snapshot
from petrichor_serving.toolspec import MAX_ID_CHARS


class HttpError(ServiceError):
    """A refusal of the HTTP layer itself (no key, a bad body, no snapshot)."""

    def __init__(self, status: int, message: str):
        super().__init__(message, status)


@dataclass(frozen=True)
class Call:
    """One request as a handler sees it: the services, and who is asking."""

    request: Request
    services: Services
    principal: Principal | None
    """None on an anonymous endpoint: the scope is public shares only."""

    def snapshot(self, version: str | None = None) -> Snapshot:
        """The current snapshot, or the retained one `version` names (404 when it is not retained)."""
        if version is not None:
            return self.services.retained.get(version)
        snap = self.services.store.current
        if snap is None:
            raise HttpError(503, "no snapshot is loaded yet: run `petrichor build`")
        return snap

    @property
    def owner(self) -> str:
        """Whose traces these are: the key's principal, or the anonymous public caller."""
        return "public" if self.principal is None else f"key:{self.principal.name}:{self.principal.tenant}"

    def scope(self, *, kb_ids: list[str] | None, article_id: str | None = None) -> Scope:
        if self.principal is None:
            return public_scope(kb_ids=kb_ids)
        return self.principal.scope(kb_ids=kb_ids, article_id=article_id)


Handler = Callable[..., Awaitable[dict[str, Any] | Response | None]]
"""A JSON reply or a response; a raw endpoint's ASGI app returns None."""


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    handler: Handler
    """`handler(call, body)` with a request model, `handler(call)` without one; returns the JSON reply."""
    summary: str
    response: type[BaseModel]
    request: type[BaseModel] | None = None
    secured: bool = True
    """Needs an API key when a key file is configured; False: anonymous, public shares only."""
    key_optional: bool = False
    """With `secured=False`: a request that carries a key is authenticated (401 when the key is not valid)
    and the handler sees its principal; one without a key is anonymous."""
    query: type[BaseModel] | None = None
    """A GET endpoint's query parameters, validated like a body and passed to the handler in its place."""
    raw: bool = False
    """An endpoint with its own wire format (OpenAI's `/v1`, MCP): the handler is a Starlette endpoint or an
    ASGI app that reads the request, authenticates and answers itself; the table still declares it."""
    error: type[BaseModel] = ErrorResponse
    replies: tuple[tuple[int, str], ...] = ()
    """Statuses besides 200 answered with the `response` model (healthz's 503), with their description."""

    def route(self) -> Route:
        if self.raw:
            return Route(self.path, self.handler, methods=[self.method])

        async def endpoint(request: Request) -> JSONResponse:
            try:
                services: Services = request.app.state.services
                call = Call(request, services, self.principal(services, request))
                body: BaseModel | None
                if self.request:
                    body = self.request.model_validate(await json_body(request))
                else:
                    body = self.query.model_validate(dict(request.query_params)) if self.query else None
                reply = await (self.handler(call, body) if body is not None else self.handler(call))
                return reply if isinstance(reply, JSONResponse) else JSONResponse(reply)
            except Exception as exc:
                if (refused := failure(exc)) is None:
                    raise
                return JSONResponse({"error": short_error(refused.message)}, status_code=refused.status)

        endpoint.__name__ = self.handler.__name__
        return Route(self.path, endpoint, methods=[self.method])

    def principal(self, services: Services, request: Request) -> Principal | None:
        if self.secured:
            return principal_of(services, request)
        if self.key_optional and (services.keys is None or request.headers.get("authorization") is not None):
            return principal_of(services, request)
        return None

    def path_params(self) -> list[str]:
        return re.findall(r"{(\w+)(?::\w+)?}", self.path)


def routes(endpoints: list[Endpoint]) -> list[Route]:
    """One route per path: endpoints sharing a path (`GET` and `POST /mcp`) are one route over their
    methods, so any other method gets a 405 whose `Allow` names them all."""
    by_path: dict[str, list[Route]] = {}
    for e in endpoints:
        by_path.setdefault(e.path, []).append(e.route())
    out: list[Route] = []
    for path, shared in by_path.items():
        if len(shared) == 1:
            out.append(shared[0])
            continue
        apps = {method: r.app for r in shared for method in r.methods or ()}
        out.append(Route(path, _ByMethod(apps), methods=sorted(apps)))
    return out


class _ByMethod:
    """An ASGI app handing each request to its method's route (the router has checked the method)."""

    def __init__(self, apps: dict[str, ASGIApp]):
        self.apps = apps

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        await self.apps[scope["method"]](scope, receive, send)


async def json_body(request: Request) -> Any:
    body = await _bounded_body(request)
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8, an over-long integer, too deep a nesting
        raise HttpError(400, f"body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HttpError(400, "body must be a JSON object")
    if b"\\u" in body and _has_lone_surrogate(data):
        raise HttpError(400, "body holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is not text")
    return data


def _has_lone_surrogate(data: Any) -> bool:
    """Whether a `\\udXXX` escape left half a character anywhere in the body (it cannot be encoded back)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError):
        return True
    return False


async def _bounded_body(request: Request) -> bytes:
    """The body, read as it streams and abandoned at `MAX_BODY_BYTES`: a chunked upload without a
    Content-Length is never buffered past the cap."""
    too_large = HttpError(413, f"request body over {MAX_BODY_BYTES} bytes")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise too_large
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > MAX_BODY_BYTES:
            raise too_large
        parts.append(part)
    return b"".join(parts)


def principal_of(services: Services, request: Request) -> Principal:
    if services.keys is None:
        return LOCAL
    principal = services.keys.authenticate(request.headers.get("authorization"))
    if principal is None:
        raise HttpError(401, "a valid API key is required (Authorization: Bearer <key>)")
    return principal


_ERRORS = {
    400: "Bad input",
    404: "Not found or out of scope",
    413: f"Body over {MAX_BODY_BYTES // 1024} KiB",
    503: "No snapshot loaded",
}


def openapi_document(endpoints: list[Endpoint]) -> dict[str, Any]:
    """OpenAPI 3.1 from the endpoint table: request and response schemas come from `schema`'s models."""
    models: set[tuple[type[BaseModel], JsonSchemaMode]] = {(e.request, "validation") for e in endpoints if e.request} | {
        (e.response, "serialization") for e in endpoints
    }
    models |= {(e.error, "serialization") for e in endpoints}
    refs, defs = models_json_schema(sorted(models, key=lambda m: (m[0].__name__, m[1])), ref_template="#/components/schemas/{model}")
    paths: dict[str, Any] = {}
    for e in endpoints:
        op: dict[str, Any] = {
            "operationId": e.handler.__name__,
            "summary": e.summary,
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": refs[(e.response, "serialization")]}}}},
        }
        errors: dict[int, str] = {}
        if e.request:
            op["requestBody"] = {"required": True, "content": {"application/json": {"schema": refs[(e.request, "validation")]}}}
        if e.request or e.query:
            errors = dict(_ERRORS)
        elif "{" in e.path:  # a GET that reads one resource named in its path
            errors = {404: _ERRORS[404]}
        if e.secured or e.key_optional:
            errors[401] = "Missing or invalid API key" if e.secured else "Invalid API key (a request without one is anonymous)"
        error = refs[(e.error, "serialization")]
        for status, text in sorted(errors.items()):
            op["responses"][str(status)] = {"description": text, "content": {"application/json": {"schema": error}}}
        for status, text in e.replies:
            op["responses"][str(status)] = {**op["responses"]["200"], "description": text}
        if e.request or e.query or e.secured or e.key_optional:
            op["security"] = [{"apiKey": []}] if e.secured else [{}, {"apiKey": []}] if e.key_optional else []
        parameters = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}}
            for name in e.path_params()
        ]
        if e.query:
            params = e.query.model_json_schema()
            parameters += [
                {"name": name, "in": "query", "required": name in params.get("required", []), "schema": prop}
                for name, prop in params["properties"].items()
            ]
        if parameters:
            op["parameters"] = parameters
        paths.setdefault(e.path, {})[e.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "Petrichor", "version": "0.1.0", "description": "Read-only knowledge search and cited answers."},
        "components": {"securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}}, "schemas": defs.get("$defs", {})},
        "paths": paths,
    }
