"""One HTTP schema: the route table, request validation and `/openapi.json` come from the same declarations."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from petrichor_serving import schema, webpage
from petrichor_serving.app import ENDPOINTS, create_app
from petrichor_serving.services import Services, ServingSettings
from petrichor_serving.snapshot import SnapshotStore


@pytest.fixture()
def client(tmp_path):
    """An app over an empty data dir: enough to exercise validation (a valid body meets the 503)."""
    services = Services(ServingSettings(data_dir=tmp_path), SnapshotStore(tmp_path), keys=None, chat=None, embedder=None)
    with TestClient(create_app(services, watch=False)) as c:
        yield c


def test_every_route_is_in_the_openapi_document_with_its_request_schema(client):
    doc = client.get("/openapi.json").json()
    page = {route.path for route in webpage.routes()}  # the QA page's HTML and static files, not JSON endpoints
    assert page <= {route.path for route in client.app.routes}
    routes = {(route.path, method) for route in client.app.routes if route.path not in page for method in route.methods if method != "HEAD"}
    assert routes == {(e.path, e.method) for e in ENDPOINTS}
    for e in ENDPOINTS:
        op = doc["paths"][e.path][e.method.lower()]
        content = op["responses"]["200"]["content"]
        if e.path == "/mcp":  # the MCP transport replies with an event stream of its messages
            assert content["text/event-stream"]["schema"]["properties"]["data"]["contentSchema"] == {"$ref": "#/components/schemas/McpMessage"}
        else:
            assert content["application/json"]["schema"] == {"$ref": f"#/components/schemas/{e.response.__name__}"}
        if e.request is None:
            assert e.method == "GET" and "requestBody" not in op
            continue
        ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert ref == f"#/components/schemas/{e.request.__name__}"
        if e.request is schema.McpMessage:  # one of the JSON-RPC message kinds, each with its own fields
            continue
        declared = doc["components"]["schemas"][e.request.__name__]
        assert set(declared["properties"]) >= {f.validation_alias.choices[0] if f.validation_alias else n for n, f in e.request.model_fields.items()}
        assert ("401" in op["responses"]) == e.secured


def test_every_path_parameter_is_declared(client):
    doc = client.get("/openapi.json").json()
    templated = [e for e in ENDPOINTS if "{" in e.path]
    assert {e.path for e in templated} == {"/api/articles/{article_id}", "/api/public/articles/{article_id}", "/api/traces/{trace_id}"}
    for e in templated:
        declared = {p["name"] for p in doc["paths"][e.path][e.method.lower()]["parameters"] if p["in"] == "path"}
        assert declared == set(e.path_params()) and declared, e.path


def test_limits_come_from_the_schema(client):
    components = client.get("/openapi.json").json()["components"]["schemas"]
    assert components["SearchRequest"]["properties"]["query"]["maxLength"] == schema.MAX_QUESTION_CHARS
    assert components["ChatRequest"]["properties"]["question"]["maxLength"] == schema.MAX_QUESTION_CHARS
    targets = components["ReadRequest"]["properties"]["targets"]["anyOf"][0]
    assert targets["maxItems"] == 4
    body = schema.SearchRequest.model_validate({"query": " q ", "limit": 99, "subQueries": ["a", "b", "c", "d"], "knowledge_base_id": "kb"})
    assert (body.query, body.limit, body.sub_queries, body.kb_ids) == ("q", schema.MAX_RESULTS, ["a", "b", "c"], ["kb"])


@pytest.mark.parametrize(
    "path,body,field",
    [
        ("/api/knowledge/search", {"query": 5}, "query"),
        ("/api/knowledge/search", {"query": "q", "limit": "5"}, "limit"),
        ("/api/knowledge/search", {"query": "q", "limit": True}, "limit"),
        ("/api/knowledge/search", {"query": "q", "limit": 0}, "limit"),
        ("/api/knowledge/search", {"query": "q", "kb_ids": [1, 2]}, "kb_ids"),
        ("/api/knowledge/search", {"query": "q", "article_id": {"x": 1}}, "article_id"),
        ("/api/knowledge/search", {"query": "q", "sub_queries": 3}, "sub_queries"),
        ("/api/knowledge/search", {"query": "   "}, "query"),
        ("/api/knowledge/outline", {"article_id": "a", "max_nodes": 1.5}, "max_nodes"),
        ("/api/knowledge/read", {"targets": ["chunk-001"]}, "targets.0"),
        ("/api/knowledge/read", {"targets": [{"chunk_id": 7}]}, "targets.0.chunk_id"),
        ("/api/knowledge/read", {"targets": []}, "targets"),
        ("/api/knowledge/read", {"targets": [{"chunk_id": "c", "window": {"window_id": []}}]}, "targets.0.window.window_id"),
        ("/api/knowledge/read", {"targets": [{"chunk_id": "c", "window": {"window_id": {}}}]}, "targets.0.window.window_id"),
        ("/api/knowledge/read", {"targets": [{"chunk_id": "c", "window": {"window_id": [1, 2]}}]}, "targets.0.window.window_id"),
        ("/api/knowledge/read", {"targets": [{"chunk_id": "c", "window": "w-1"}]}, "targets.0.window"),
        ("/api/knowledge/read", {"chunk_id": "c", "window": {"window_id": 7}}, "window.window_id"),
        ("/api/knowledge/read", {"targets": [{"chunk_id": "c", "kb_id": ["kb"]}]}, "targets.0.kb_id"),
        ("/api/assistant/chat", {"question": ["x" * 5000]}, "question"),
        ("/api/public/qa/chat", {"message": "q" * (schema.MAX_QUESTION_CHARS + 1)}, "message"),
    ],
)
def test_wrong_json_types_are_a_short_400_naming_the_field(client, path, body, field):
    res = client.post(path, json=body)
    assert res.status_code == 400, res.text
    error = res.json()["error"]
    assert error.startswith(f"{field}: ") and len(error) <= 200 and "xxxxx" not in error


def test_a_valid_body_reaches_the_handler(client):
    res = client.post("/api/knowledge/search", json={"query": "q", "limit": 50, "kb_ids": None, "tenant": "other"})
    assert res.status_code == 503 and "no snapshot" in res.json()["error"]


def _keyed_client(tmp_path):
    import hashlib
    import json

    from petrichor_serving.auth import KeyStore

    key_file = tmp_path / "keys.json"
    key_file.write_text(json.dumps({"keys": [{"sha256": hashlib.sha256(b"k").hexdigest(), "tenant": "t", "kbs": "*"}]}))
    services = Services(ServingSettings(data_dir=tmp_path), SnapshotStore(tmp_path), keys=KeyStore.load(key_file), chat=None, embedder=None)
    return TestClient(create_app(services, watch=False))


BAD_BODIES = [b"{not json", b'{"query": 5, "question": [], "model": 1, "messages": 2}', b"[]"]


@pytest.mark.parametrize("raw", BAD_BODIES, ids=["not-json", "wrong-types", "not-an-object"])
def test_a_bad_body_without_a_key_is_401_before_any_validation(tmp_path, raw):
    """No endpoint tells a caller without a key what a valid body looks like: `/api`, `/v1` and `/mcp`."""
    with _keyed_client(tmp_path) as client:
        secured = [e for e in ENDPOINTS if e.secured and e.method == "POST"]
        assert {e.path for e in secured} >= {"/api/knowledge/read", "/v1/chat/completions", "/mcp"}
        for e in secured:
            headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
            res = client.post(e.path, content=raw, headers=headers)
            assert res.status_code == 401, (e.path, res.text)
            wrong = client.post(e.path, content=raw, headers={**headers, "authorization": "Bearer wrong"})
            assert wrong.status_code == 401, (e.path, wrong.text)


def test_snapshot_status_without_a_key_names_versions_only(tmp_path):
    with _keyed_client(tmp_path) as client:
        res = client.get("/api/snapshot")
        assert res.status_code == 200 and res.json() == {"status": "degraded", "current": None, "refused": None, "pointer": None}
        assert client.get("/api/snapshot", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/api/snapshot", headers={"authorization": "Bearer k"}).json()["current"] is None


def test_the_question_of_a_chat_completion_is_its_last_user_message_with_text():
    """Messages after the question (an assistant prefix, tool output) are ignored, and the document states the
    one rule a body must meet (`contains` a user question), so every schema-valid body is answerable."""
    body = schema.ChatCompletionRequest.model_validate(
        {
            "model": "petrichor",
            "messages": [
                {"role": "user", "content": "What is RRF?"},
                {"role": "assistant", "content": "A fusion of ranked lists."},
                {"role": "user", "content": [{"type": "text", "text": "Its constant?"}]},
                {"role": "assistant", "content": "The constant is"},
            ],
        }
    )
    assert body.question() == "Its constant?"
    assert body.turns() == [{"role": "user", "content": "What is RRF?"}, {"role": "assistant", "content": "A fusion of ranked lists."}]
    with pytest.raises(ValueError, match="a user message with text"):
        schema.ChatCompletionRequest.model_validate(
            {"model": "m", "messages": [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "  "}]}
        )
    messages = schema.ChatCompletionRequest.model_json_schema()["properties"]["messages"]
    assert messages["contains"]["properties"]["role"] == {"const": "user"}
