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
        assert op["responses"]["200"]["content"]["application/json"]["schema"] == {"$ref": f"#/components/schemas/{e.response.__name__}"}
        if e.request is None:
            assert e.method == "GET" and "requestBody" not in op
            continue
        ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert ref == f"#/components/schemas/{e.request.__name__}"
        declared = doc["components"]["schemas"][e.request.__name__]
        assert set(declared["properties"]) >= {f.validation_alias.choices[0] if f.validation_alias else n for n, f in e.request.model_fields.items()}
        assert ("401" in op["responses"]) == e.secured


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
