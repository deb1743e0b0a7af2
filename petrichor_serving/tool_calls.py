"""Each knowledge tool's call from its checked arguments, written once for every transport that offers the
tool to a caller: the HTTP endpoints (`app`) and the MCP tools (`mcp_server`) look the call up here by the
tool's name (`toolspec.TOOLS`), so a tool added to `toolspec` is wired by one entry in `CALLS`. The model
agent calls the same tools through its run (`agent.runtime.Run`), which adds the run's budget and trace.

The caller's scope is narrowed, never widened, by the arguments that say so (`ToolSpec.scope`): `scope_of`
is the principal's (or the public) scope function, given the knowledge-base filter and, for search, the
article filter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from petrichor_serving import toolspec
from petrichor_serving.agent import tools
from petrichor_serving.recall.access import Scope
from petrichor_serving.snapshot import Snapshot


class ScopeOf(Protocol):
    def __call__(self, *, kb_ids: list[str] | None, article_id: str | None = None) -> Scope: ...


Call = Callable[[Snapshot, ScopeOf, Any, Any], dict[str, Any]]
"""(snapshot, scope function, checked arguments, embedder or None) -> the tool's JSON reply."""


def _search(snap: Snapshot, scope_of: ScopeOf, body: toolspec.SearchArguments, embedder: Any) -> dict[str, Any]:
    scope = scope_of(kb_ids=body.kb_ids, article_id=body.article_id)
    return tools.search(snap, scope, body.query, embedder=embedder, limit=body.limit, sub_queries=body.sub_queries)


def _outline(snap: Snapshot, scope_of: ScopeOf, body: toolspec.OutlineRequest, embedder: Any) -> dict[str, Any]:
    return tools.outline(snap, scope_of(kb_ids=body.kb_ids), body.article_id, max_nodes=body.max_nodes)


def _read(snap: Snapshot, scope_of: ScopeOf, body: toolspec.ReadArguments, embedder: Any) -> dict[str, Any]:
    return tools.read(snap, scope_of(kb_ids=body.kb_ids), body.target())


def _read_many(snap: Snapshot, scope_of: ScopeOf, body: toolspec.ReadManyArguments, embedder: Any) -> dict[str, Any]:
    return tools.read_many(snap, scope_of(kb_ids=body.kb_ids), [t.target() for t in body.targets])


CALLS: dict[str, Call] = {
    toolspec.SEARCH.name: _search,
    toolspec.OUTLINE.name: _outline,
    toolspec.READ.name: _read,
    toolspec.READ_MANY.name: _read_many,
}


def call_tool(spec: toolspec.ToolSpec, snap: Snapshot, scope_of: ScopeOf, body: Any, embedder: Any) -> dict[str, Any]:
    """Run the tool `spec` names on `snap` for the caller whose scope `scope_of` gives."""
    return CALLS[spec.name](snap, scope_of, body, embedder)
