"""Each knowledge tool is one declaration, its entry in `tool_calls.TOOLS`: the HTTP endpoints, the MCP tools,
the model agent's functions and executor, and a run's metered and traced calls are all generated from it.
A fifth tool declared in a copy of the registry is served on every surface with no other change."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.testclient import TestClient

from petrichor_serving import app, mcp_server, tool_calls, toolspec
from petrichor_serving.agent import model_agent, runtime
from petrichor_serving.agent.budget import Budget, BudgetExceeded
from petrichor_serving.agent.router import QuestionClass, Route
from petrichor_serving.agent.runtime import Run
from petrichor_serving.auth import LOCAL
from petrichor_serving.endpoints import openapi_document, routes
from petrichor_serving.errors import ToolError
from petrichor_serving.recall.access import Scope
from petrichor_serving.tool_calls import Http, Tool, Within
from petrichor_serving.toolspec import Names, Request, ToolSpec


class CountArguments(Request):
    prefix: str = Field("", description="count the titles that start with this")
    kb_ids: Names | None = Field(None, description="limit to these knowledge bases")


class CountResponse(BaseModel):
    snapshot_version: str
    count: int
    kb_ids: list[str] | None


def _count(at: Within, a: CountArguments) -> dict[str, Any]:
    if at.scope.tenant == "nobody":
        raise ToolError("nothing to count", 404)
    kb_ids = None if at.scope.kb_ids is None else sorted(at.scope.kb_ids)
    return {"snapshot_version": at.snap.version, "count": sum(t.startswith(a.prefix) for t in at.snap.titles), "kb_ids": kb_ids}


COUNT = Tool(
    ToolSpec("knowledge_count", "Count the titles in scope.", CountArguments),
    _count,
    Http("/api/knowledge/count", "Count the titles in scope", CountArguments, CountResponse),
    locators=lambda reply: [f"count:{reply['count']}"],
    shown=lambda reply: {"count": reply["count"]},
)
REGISTRY = (*tool_calls.TOOLS, COUNT)
SNAP = SimpleNamespace(version="v1", titles=("Alpha", "Alps", "Beta"))
SERVICES = SimpleNamespace(keys=None, store=SimpleNamespace(current=SNAP), embedder=None)


def _listed(server) -> dict[str, Any]:
    return {t.name: t for t in anyio.run(server.list_tools)}


def test_the_registry_declares_each_contract_once():
    assert [t.spec for t in tool_calls.TOOLS] == list(toolspec.TOOLS)
    assert tool_calls.CALLS == {t.spec.name: t for t in tool_calls.TOOLS}


def test_every_surface_offers_the_registry_and_nothing_else():
    declared = [t.name for t in tool_calls.TOOLS]
    tool_endpoints = [e for e in app.ENDPOINTS if e.path.startswith("/api/knowledge/")]
    assert [(e.path, e.handler.__name__) for e in tool_endpoints] == [(t.http.path, t.name) for t in tool_calls.TOOLS if t.http]
    assert [app.OPENAPI["paths"][e.path]["post"]["operationId"] for e in tool_endpoints] == [t.name for t in tool_calls.TOOLS if t.http]
    assert list(_listed(mcp_server.build_server(None, lambda ctx: LOCAL))) == declared
    assert model_agent.TOOLS == [t.spec.function() for t in tool_calls.TOOLS]
    assert model_agent.TOOL_NAMES == set(declared)


@pytest.mark.parametrize("module", [app, mcp_server, model_agent, runtime])
def test_no_consumer_wires_a_tool_by_hand(module):
    """The consumers call a tool only through its entry: none calls a tool function itself, and the handlers
    and the model agent name no tool (a run names only the batch read its evidence comes through)."""
    source = Path(module.__file__).read_text(encoding="utf-8")
    assert not re.search(r"\btools\.(search|outline|read|read_many)\(", source)
    if module is not runtime:
        assert not re.search(r"\b(SEARCH|OUTLINE|READ|READ_MANY)\b", source)


def test_a_fifth_tool_gets_its_http_endpoint_from_its_declaration():
    endpoints = app.tool_endpoints(REGISTRY)
    assert [e.path for e in endpoints][-1] == "/api/knowledge/count" and endpoints[-1].handler.__name__ == "knowledge_count"
    op = openapi_document(endpoints)["paths"]["/api/knowledge/count"]["post"]
    assert op["operationId"] == "knowledge_count" and op["summary"] == "Count the titles in scope"
    assert op["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/CountArguments"}
    served = Starlette(routes=routes(endpoints))
    served.state.services = SERVICES
    with TestClient(served) as client:
        reply = client.post("/api/knowledge/count", json={"prefix": "Al", "kb_ids": "kb1"})
        assert reply.status_code == 200 and reply.json() == {"snapshot_version": "v1", "count": 2, "kb_ids": ["kb1"]}
        refused = client.post("/api/knowledge/count", json={"prefix": 5})
        assert refused.status_code == 400 and refused.json() == {"error": "prefix: Input should be a valid string"}


def test_a_fifth_tool_is_an_mcp_tool_from_its_declaration():
    server = mcp_server.build_server(SERVICES, lambda ctx: LOCAL, tools=REGISTRY)
    listed = _listed(server)
    assert list(listed)[-1] == "knowledge_count"
    assert listed["knowledge_count"].input_schema == CountArguments.model_json_schema()
    assert listed["knowledge_count"].annotations.read_only_hint
    result = anyio.run(server.call_tool, "knowledge_count", {"prefix": "B", "kb_ids": ["kb2"]})
    assert json.loads(result.content[0].text) == {"snapshot_version": "v1", "count": 1, "kb_ids": ["kb2"]}


def _run(scope: Scope, max_tool_calls: int = 4) -> Run:
    return Run(SNAP, scope, Route(QuestionClass.FACT, "", "en"), Budget(4, max_tool_calls, 60.0, 1000))


def test_a_fifth_tool_is_run_for_the_model_within_the_run_scope_and_budget():
    run = _run(Scope(tenant="acme"), max_tool_calls=1)
    assert COUNT.spec.function()["function"]["parameters"]["properties"] == {"prefix": CountArguments.model_json_schema()["properties"]["prefix"]}
    shown = model_agent._execute(run, COUNT, {"prefix": "Al", "kb_ids": ["other"]})  # a model cannot narrow nor widen the scope
    assert shown == {"count": 2}
    [step] = run.trace.steps
    assert (step.tool, step.arguments, step.locators, step.error) == ("count", {"prefix": "Al"}, ["count:2"], None)
    with pytest.raises(BudgetExceeded):
        run.call(COUNT, CountArguments(prefix="B"))
    assert len(run.trace.steps) == 1


def test_a_run_records_a_refused_call_before_raising():
    run = _run(Scope(tenant="nobody"))
    with pytest.raises(ToolError):
        run.call(COUNT, CountArguments(prefix="A"))
    assert [(s.tool, s.arguments, s.error) for s in run.trace.steps] == [("count", {"prefix": "A"}, "nothing to count")]
    assert run.meter.tool_calls == 1
