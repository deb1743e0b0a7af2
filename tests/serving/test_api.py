"""The HTTP API over the built bundled corpus, in local mode and with an API-key file."""

from __future__ import annotations

import hashlib
import json

import pytest
from starlette.testclient import TestClient

from petrichor_core.config import load_settings
from petrichor_serving.app import create_app
from petrichor_serving.auth import KeyStore
from petrichor_serving.services import Services, ServingSettings
from tests.conftest import isolated_env

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess


def _client(built_corpus, monkeypatch, keys: KeyStore | None = None) -> TestClient:
    from petrichor_core.models.providers import make_answer_model, make_embedder
    from petrichor_serving.snapshot import SnapshotStore

    isolated_env(monkeypatch, built_corpus.data_dir, built_corpus.corpus_dir, built_corpus.dagster_home)
    settings = load_settings()
    embedder = make_embedder(settings)
    store = SnapshotStore(settings.data_dir, embed_fingerprint=embedder.fingerprint)
    serving = ServingSettings(data_dir=settings.data_dir)
    services = Services(settings=serving, store=store, keys=keys, chat=make_answer_model(settings), embedder=embedder)
    return TestClient(create_app(services, watch=False))


@pytest.fixture()
def client(built_corpus, monkeypatch):
    with _client(built_corpus, monkeypatch) as c:
        yield c


def _first_chunk(client: TestClient, query: str) -> dict:
    res = client.post("/api/knowledge/search", json={"query": query, "limit": 5})
    assert res.status_code == 200, res.text
    return next(c for c in res.json()["candidates"] if c.get("chunk_id"))


def test_health_snapshot_and_openapi(client, built_corpus):
    assert client.get("/healthz").json() == {"status": "ok", "snapshot_version": built_corpus.summary["snapshot_version"]}
    snap = client.get("/api/snapshot").json()
    assert snap["current"]["version"] == built_corpus.summary["snapshot_version"]
    assert snap["refused"] is None
    doc = client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.") and "/api/knowledge/search" in doc["paths"]


def test_search_outline_read_roundtrip(client):
    hit = _first_chunk(client, "How are API keys stored in the key file?")
    assert hit["routes"] and hit["heading_path"] is not None
    outline = client.post("/api/knowledge/outline", json={"article_id": hit["article_id"]}).json()
    assert outline["source"] in ("wiki_tree", "chunk_headings") and outline["node_count"] > 0
    read = client.post("/api/knowledge/read", json={"chunk_id": hit["chunk_id"]}).json()
    item = read["results"][0]
    assert item["kind"] == "chunk" and item["article_version"] and item["content"]
    article = client.post("/api/knowledge/read", json={"article_id": hit["article_id"]}).json()["results"][0]
    assert article["content"][item["start"] : item["end"]] == item["content"]
    many = client.post("/api/knowledge/read", json={"targets": [{"chunk_id": hit["chunk_id"]}, {"chunk_id": "nope:chunk-001"}]}).json()
    assert len(many["results"]) == 1 and len(many["failures"]) == 1
    node_key = next((n["node_key"] for n in outline["nodes"] if n.get("node_key")), None)
    if node_key:
        node = client.post("/api/knowledge/read", json={"node_key": node_key}).json()["results"][0]
        assert node["kind"] == "tree_node"


def test_wiki_page_read_has_links_and_backlinks(client):
    res = client.post("/api/knowledge/search", json={"query": "snapshot CURRENT atomic swap", "limit": 20}).json()
    page = next((c for c in res["candidates"] if c.get("page_key")), None)
    if page is None:
        pytest.skip("no wiki hit for this query")
    got = client.post("/api/knowledge/read", json={"page_key": page["page_key"]}).json()["results"][0]
    assert got["kind"] == "wiki_page" and "links" in got and "backlinks" in got


def test_assistant_chat_cites_what_it_read(client):
    res = client.post("/api/assistant/chat", json={"question": "What is the default maximum file size for a source file?"})
    assert res.status_code == 200, res.text
    doc = res.json()
    assert doc["citations"]
    for c in doc["citations"]:
        article = client.post("/api/knowledge/read", json={"article_id": c["article_id"]}).json()["results"][0]
        assert article["content"][c["quote_start"] : c["quote_end"]] == c["quote"]


@pytest.mark.parametrize(
    "path,body,status",
    [
        ("/api/knowledge/search", {}, 400),
        ("/api/knowledge/search", {"query": ""}, 400),
        ("/api/knowledge/search", {"query": "x", "limit": "ten"}, 400),
        ("/api/knowledge/search", [1, 2], 400),
        ("/api/knowledge/read", {"chunk_id": "a", "page_key": "b"}, 400),
        ("/api/knowledge/read", {"chunk_id": "missing:chunk-001"}, 404),
        ("/api/knowledge/read", {"targets": [{"chunk_id": "x"}] * 5}, 400),
        ("/api/knowledge/outline", {"article_id": "missing"}, 404),
        ("/api/assistant/chat", {"question": "q" * 8001}, 400),
    ],
)
def test_bad_input_gets_a_clear_4xx(client, path, body, status):
    res = client.post(path, json=body)
    assert res.status_code == status, res.text
    assert res.json()["error"]


def test_invalid_json_and_oversized_bodies(client):
    assert client.post("/api/knowledge/search", content=b"{not json", headers={"content-type": "application/json"}).status_code == 400
    big = json.dumps({"query": "x" * (600 * 1024)})
    assert client.post("/api/knowledge/search", content=big, headers={"content-type": "application/json"}).status_code == 413


def test_api_keys_scope_tenants(built_corpus, monkeypatch, tmp_path):
    key_file = tmp_path / "keys.json"
    key_file.write_text(
        json.dumps(
            {
                "keys": [
                    {"sha256": hashlib.sha256(b"acme-key").hexdigest(), "tenant": "acme", "kbs": "*"},
                    {"sha256": hashlib.sha256(b"globex-key").hexdigest(), "tenant": "globex", "kbs": ["petrichor-en"]},
                ]
            }
        )
    )
    with _client(built_corpus, monkeypatch, KeyStore.load(key_file)) as c:
        assert c.post("/api/knowledge/search", json={"query": "snapshot"}).status_code == 401
        assert c.post("/api/knowledge/search", json={"query": "snapshot"}, headers={"Authorization": "Bearer wrong"}).status_code == 401
        acme = c.post("/api/knowledge/search", json={"query": "snapshot 快照", "limit": 20}, headers={"Authorization": "Bearer acme-key"}).json()
        globex = c.post("/api/knowledge/search", json={"query": "snapshot 快照", "limit": 20}, headers={"Authorization": "Bearer globex-key"}).json()
        assert acme["candidates"] and globex["candidates"]
        acme_articles = {x["article_id"] for x in acme["candidates"] if x.get("article_id")}
        globex_articles = {x["article_id"] for x in globex["candidates"] if x.get("article_id")}
        assert not acme_articles & globex_articles
        # a locator of the other tenant reads as not found
        foreign = next(x["chunk_id"] for x in globex["candidates"] if x.get("chunk_id"))
        assert c.post("/api/knowledge/read", json={"chunk_id": foreign}, headers={"Authorization": "Bearer acme-key"}).status_code == 404
        # the tenant comes from the key, never from the body
        body = {"query": "snapshot", "tenant": "globex", "kb_ids": ["petrichor-en"]}
        res = c.post("/api/knowledge/search", json=body, headers={"Authorization": "Bearer acme-key"}).json()
        assert not {x["article_id"] for x in res["candidates"] if x.get("article_id")} & globex_articles


def test_snapshot_status_counts_only_what_the_caller_may_read(keyed, built_corpus):
    """Without a key: versions only. With a key: articles and chunks within its tenant, never the snapshot's
    totals over every tenant."""
    anonymous = keyed.get("/api/snapshot")
    assert anonymous.status_code == 200
    assert set(anonymous.json()["current"]) == {"version", "created_at"} and anonymous.json()["status"] == "ok"
    assert "rows" not in anonymous.text and str(built_corpus.data_dir) not in anonymous.text
    rows = {
        key: keyed.get("/api/snapshot", headers={"Authorization": f"Bearer {key}"}).json()["current"]["rows"] for key in ("acme-key", "globex-key")
    }
    for counts in rows.values():
        assert set(counts) == {"articles", "chunks"} and counts["articles"] > 0 and counts["chunks"] >= counts["articles"]
    snap = keyed.app.state.services.store.current
    assert rows["acme-key"]["articles"] + rows["globex-key"]["articles"] <= len(snap.articles)
    assert rows["acme-key"]["chunks"] + rows["globex-key"]["chunks"] <= len(snap.chunks)
    assert rows["acme-key"] != rows["globex-key"]  # each tenant's own counts
    assert keyed.get("/api/snapshot", headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_public_chat_reads_only_public_shares(client, built_corpus):
    import pyarrow.parquet as pq

    snaps = built_corpus.data_dir / "snapshots"
    version = (snaps / "CURRENT").read_text().strip()
    arts = pq.read_table(snaps / version / "articles.parquet").to_pylist()
    public_ids = {a["article_id"] for a in arts if a["visibility"] == "public" and not a["password_protected"] and a["share_expires_at"] is None}
    assert len(public_ids) == 1
    res = client.post("/api/public/qa/chat", json={"question": "How do I build the knowledge base and ask a question?"})
    assert res.status_code == 200
    doc = res.json()
    assert {c["article_id"] for c in doc["citations"]} <= public_ids
    assert {e["article_id"] for e in doc["evidence"]} <= public_ids
