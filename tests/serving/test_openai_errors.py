"""The `/v1` error shape without a built corpus: no snapshot, bad JSON, wrong types (fast, in-process)."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from petrichor_serving.answer.answerer import OfflineAnswerer
from petrichor_serving.app import create_app
from petrichor_serving.services import ServingSettings, build_services


@pytest.fixture()
def client(tmp_path):
    services = build_services(ServingSettings(data_dir=tmp_path), chat=OfflineAnswerer(), embedder=None)
    with TestClient(create_app(services, watch=False)) as c:
        yield c


def _error(res, status: int) -> dict:
    assert res.status_code == status, res.text
    body = res.json()["error"]
    assert set(body) == {"message", "type", "param", "code"} and body["message"]
    return body


def test_no_snapshot_is_503_in_the_openai_shape(client):
    assert _error(client.get("/v1/models"), 503)["type"] == "server_error"
    body = {"model": "petrichor", "messages": [{"role": "user", "content": "What is RRF?"}]}
    assert _error(client.post("/v1/chat/completions", json=body), 503)["code"] == "no_snapshot"


@pytest.mark.parametrize(
    "content,param",
    [
        (b"{not json", None),
        (b"[1, 2]", None),
        (b'{"messages": [{"role": "user", "content": "q"}]}', "model"),
        (b'{"model": "petrichor", "messages": [{"role": "root", "content": "q"}]}', "messages"),
    ],
)
def test_bad_bodies_are_400(client, content, param):
    res = client.post("/v1/chat/completions", content=content, headers={"content-type": "application/json"})
    assert _error(res, 400)["param"] == param
