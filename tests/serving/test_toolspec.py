"""The four knowledge tools are declared once (`toolspec`): the HTTP request models, the MCP tools and
the model agent's function schemas all come from that declaration, and every surface maps errors the
same way (`errors.failure`)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

from petrichor_serving import schema, toolspec
from petrichor_serving.agent import model_agent
from petrichor_serving.endpoints import HttpError
from petrichor_serving.errors import Failure, ToolError, failure
from petrichor_serving.history import HistoryError
from petrichor_serving.mcp_server import build_server


def _mcp_tools() -> dict:
    server = build_server(None, lambda ctx: None)  # listing needs neither services nor a caller
    return {t.name: t for t in anyio.run(server.list_tools)}


def test_the_mcp_tools_publish_the_declared_models():
    listed = _mcp_tools()
    assert list(listed) == [t.name for t in toolspec.TOOLS]
    for spec in toolspec.TOOLS:
        tool = listed[spec.name]
        assert tool.input_schema == spec.arguments.model_json_schema()
        assert tool.description == spec.description and tool.annotations.read_only_hint


def test_the_agent_functions_are_the_declared_models_without_their_scope_fields():
    assert [f["function"]["name"] for f in model_agent.TOOLS] == [t.name for t in toolspec.TOOLS]
    for spec, function in zip(toolspec.TOOLS, model_agent.TOOLS):
        params = function["function"]["parameters"]
        assert function["function"]["description"] == spec.description
        assert params == spec.agent_arguments.model_json_schema()
        declared = spec.input_schema()
        assert toolspec.KB_IDS in spec.scope and set(spec.scope) <= set(declared["properties"])
        assert params["properties"] == {k: v for k, v in declared["properties"].items() if k not in spec.scope}
        assert params.get("required", []) == declared.get("required", [])
    assert "article_id" not in model_agent.TOOLS[0]["function"]["parameters"]["properties"]  # a private chat's article limit holds


def test_the_http_requests_extend_the_declared_models():
    assert issubclass(schema.SearchRequest, toolspec.SearchArguments)
    assert schema.OutlineRequest is toolspec.OutlineRequest
    assert issubclass(schema.ReadRequest, toolspec.ReadArguments)
    targets = schema.ReadRequest.model_json_schema()["properties"]["targets"]["anyOf"][0]
    many = {k: v for k, v in toolspec.ReadManyArguments.model_json_schema()["properties"]["targets"].items() if k != "title"}
    assert targets == many and many["maxItems"] == toolspec.MAX_READ_MANY


@pytest.mark.parametrize(
    ("exc", "want"),
    [
        (ToolError("chunk 'x' not found", 404), Failure(404, "chunk 'x' not found")),
        (HistoryError(404, "snapshot 'v' is not retained"), Failure(404, "snapshot 'v' is not retained")),
        (HttpError(503, "no snapshot is loaded yet"), Failure(503, "no snapshot is loaded yet")),
        (RuntimeError("a bug"), None),
    ],
)
def test_one_error_mapping(exc, want):
    assert failure(exc) == want


def test_a_validation_error_names_its_field_on_every_surface():
    with pytest.raises(ValidationError) as err:
        toolspec.SearchArguments.model_validate({"query": "q", "limit": 0})
    assert failure(err.value) == Failure(400, "limit: Input should be greater than or equal to 1")


def test_every_tool_is_called_one_way_for_http_and_mcp():
    """A tool declared in `toolspec` has exactly one call (`tool_calls.CALLS`), which both transports use."""
    from petrichor_serving import app, mcp_server, tool_calls, toolspec

    assert set(tool_calls.CALLS) == {t.name for t in toolspec.TOOLS}
    for module in (app, mcp_server):
        assert module.call_tool is tool_calls.call_tool
        assert "tools.search(" not in Path(module.__file__).read_text(encoding="utf-8")
