"""The knowledge tools, each declared once: its contract (`toolspec.ToolSpec`) with its function, and what
each consumer needs of it. Every consumer is generated from `TOOLS`, none names a tool:

- the HTTP endpoints (`app.tool_endpoints`): one `POST` per tool with an `Http` binding;
- the MCP tools (`mcp_server.build_server`): every tool, checked by its arguments model;
- the model agent (`agent.model_agent`): its OpenAI functions, and its executor, which shows the model a
  tool's reply as `shown` makes it, or, for a read tool (`reads`), the evidence it read;
- a run's calls (`agent.runtime.Run.call`): metered against the budget and recorded in the trace as
  `traced`, `locators` and `error` say; a run reads every read tool's locators into its evidence through
  the batch read (`Run.read_many`).

The contract stays in `toolspec`, which imports no agent module (the HTTP contract must not depend on the
agent); the functions are here because they call the agent's tool functions (`agent.tools`).

The caller's scope is narrowed, never widened, by the arguments that say so (`ToolSpec.scope`): over HTTP
and MCP `scope_of` is the principal's (or the public) scope function, given those arguments (`call_tool`);
a run narrows its own scope (`Run.call`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from petrichor_serving import schema, toolspec
from petrichor_serving.agent import tools
from petrichor_serving.agent.evidence import locator_of
from petrichor_serving.recall.access import Scope
from petrichor_serving.recall.config import DEFAULT_CONFIG, RecallConfig
from petrichor_serving.snapshot import Snapshot

A = TypeVar("A", bound=toolspec.Request)


class ScopeOf(Protocol):
    def __call__(self, *, kb_ids: list[str] | None, article_id: str | None = None) -> Scope: ...


@dataclass(frozen=True)
class Within:
    """Where one call runs: the snapshot, the scope it reads within (already narrowed by the call's scope
    arguments), the query embedder, and the recall configuration (a plan may search with its own)."""

    snap: Snapshot
    scope: Scope
    embedder: Any = None
    config: RecallConfig = DEFAULT_CONFIG


Serve = Callable[[Snapshot, ScopeOf, Any, Any], dict[str, Any]]
"""(snapshot, scope function, checked request, embedder or None) -> the JSON reply to a transport's caller."""


@dataclass(frozen=True)
class Http:
    """A tool's endpoint: `POST path`, its summary, and its request model (the tool's arguments, or a
    `schema` model extending them) and response model."""

    path: str
    summary: str
    request: type[BaseModel]
    response: type[BaseModel]
    serve: Serve | None = None
    """The endpoint's own call, where its request asks for more than the tool does (the read endpoint also
    reads many); None: `call_tool` of the tool."""


def _arguments(arguments: toolspec.Request) -> dict[str, Any]:
    return arguments.model_dump(mode="json", exclude_none=True)


def _no_locators(reply: dict[str, Any]) -> list[str]:
    return []


def _no_error(reply: dict[str, Any]) -> str | None:
    return None


def _whole(reply: dict[str, Any]) -> Any:
    return reply


@dataclass(frozen=True)
class Tool(Generic[A]):
    spec: toolspec.ToolSpec
    call: Callable[[Within, A], dict[str, Any]]
    """The tool's function: its JSON reply to checked arguments (`spec.arguments`, or a request extending them)."""
    http: Http | None = None
    """Its HTTP endpoint; None: none of its own (offered over MCP and to the model agent)."""
    traced: Callable[[A], dict[str, Any]] = _arguments
    """The arguments a run's trace records for a call."""
    locators: Callable[[dict[str, Any]], list[str]] = _no_locators
    """The locators a run's trace records from a reply."""
    error: Callable[[dict[str, Any]], str | None] = _no_error
    """What a run's trace records as the error of a reply that answers (the targets a batch could not read)."""
    shown: Callable[[dict[str, Any]], Any] = _whole
    """What the model agent is shown of a reply."""
    reads: Callable[[A], list[dict[str, Any]]] | None = None
    """A read tool: the locators a call reads. A run reads them into its evidence, and the model is shown that
    evidence instead of the reply."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def step(self) -> str:
        """The tool's name in a run's trace: without the `knowledge_` every tool name starts with."""
        return self.spec.name.removeprefix("knowledge_")


def call_tool(tool: Tool[Any], snap: Snapshot, scope_of: ScopeOf, body: Any, embedder: Any) -> dict[str, Any]:
    """`tool`'s reply on `snap` to the caller whose scope `scope_of` gives, narrowed by the body's scope arguments."""
    scope = scope_of(**{name: getattr(body, name) for name in tool.spec.scope})
    return tool.call(Within(snap, scope, embedder), body)


def _search(at: Within, a: toolspec.SearchArguments) -> dict[str, Any]:
    return tools.search(at.snap, at.scope, a.query, embedder=at.embedder, limit=a.limit, sub_queries=a.sub_queries, config=at.config)


def _search_traced(a: toolspec.SearchArguments) -> dict[str, Any]:
    traced: dict[str, Any] = {"query": a.query, "limit": a.limit}
    if a.sub_queries:
        traced["sub_queries"] = list(a.sub_queries)
    if a.article_id:
        traced["article_id"] = a.article_id
    return traced


def _hit_locators(found: dict[str, Any]) -> list[str]:
    return [c.get("chunk_id") or c.get("page_key") or c.get("node_key") or "" for c in found["candidates"]]


_SHOWN_HIT = ("chunk_id", "page_key", "node_key", "article_id", "title", "heading_path", "snippet")
_SHOWN_NODE = ("node_key", "chunk_id", "parent_key", "depth", "title")


def _search_shown(found: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": [{k: c.get(k) for k in _SHOWN_HIT if c.get(k) is not None} for c in found["candidates"]]}


def _outline(at: Within, a: toolspec.OutlineRequest) -> dict[str, Any]:
    return tools.outline(at.snap, at.scope, a.article_id, max_nodes=a.max_nodes)


def _outline_shown(tree: dict[str, Any]) -> dict[str, Any]:
    return {"article_id": tree["article_id"], "title": tree["title"], "nodes": [{k: n.get(k) for k in _SHOWN_NODE} for n in tree["nodes"]]}


def _read(at: Within, a: toolspec.ReadArguments) -> dict[str, Any]:
    return tools.read(at.snap, at.scope, a.target())


def _read_endpoint(snap: Snapshot, scope_of: ScopeOf, body: schema.ReadRequest, embedder: Any) -> dict[str, Any]:
    """`/api/knowledge/read`: `targets` reads many, a locator alone reads one (in the same shape)."""
    if body.targets is not None:
        return call_tool(READ_MANY, snap, scope_of, body, embedder)
    return {"results": [call_tool(READ, snap, scope_of, body, embedder)], "requested_count": 1, "skipped_count": 0, "failures": []}


def _targets(a: toolspec.ReadManyArguments) -> list[dict[str, Any]]:
    return [t.target() for t in a.targets]


def _read_many(at: Within, a: toolspec.ReadManyArguments) -> dict[str, Any]:
    return tools.read_many(at.snap, at.scope, _targets(a))


SEARCH = Tool(
    toolspec.SEARCH,
    _search,
    Http(
        "/api/knowledge/search",
        "Hybrid search: locators, titles, heading paths, snippets, routes, scores (never full text)",
        schema.SearchRequest,
        toolspec.SearchResponse,
    ),
    traced=_search_traced,
    locators=_hit_locators,
    shown=_search_shown,
)
OUTLINE = Tool(
    toolspec.OUTLINE,
    _outline,
    Http(
        "/api/knowledge/outline", "An article's PageIndex tree, or a light tree from chunk headings", schema.OutlineRequest, toolspec.OutlineResponse
    ),
    traced=lambda a: {"article_id": a.article_id},
    locators=lambda tree: [n.get("node_key") or n.get("chunk_id") or "" for n in tree["nodes"]][:50],
    shown=_outline_shown,
)
READ = Tool(
    toolspec.READ,
    _read,
    Http("/api/knowledge/read", "Read one locator, or up to 4 with `targets`", schema.ReadRequest, toolspec.ReadResponse, serve=_read_endpoint),
    reads=lambda a: [a.target()],
)
READ_MANY = Tool(
    toolspec.READ_MANY,
    _read_many,  # over HTTP: the read endpoint's `targets`
    traced=lambda a: {"targets": _targets(a)},
    locators=lambda got: [locator_of(i) for i in got["results"]],
    error=lambda got: "; ".join(f["error"] for f in got["failures"]) or None,
    reads=_targets,
)
TOOLS: tuple[Tool[Any], ...] = (SEARCH, OUTLINE, READ, READ_MANY)
"""One entry per `toolspec.TOOLS`, in its order."""
CALLS: dict[str, Tool[Any]] = {t.name: t for t in TOOLS}
"""Each tool's entry by its name."""
