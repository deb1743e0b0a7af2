"""History that outlives edits: a citation resolves to the same quote after its article changed, two more
builds and garbage collection; older snapshots answer with their own text until they are collected."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from starlette.testclient import TestClient

from tests.conftest import isolated_env, run_cli_build

pytestmark = pytest.mark.slow  # builds a corpus, starts a server

PROBE = "petrichor-en/guides/lantern-rotation.md"
KEYS = {"globex-key": "globex", "acme-key": "acme"}


def _probe(minutes: int) -> str:
    return (
        "---\ntitle: Quartz lantern rotation\nvisibility: public\n---\n\n# Quartz lantern rotation\n\n"
        "## Schedule\n\n"
        f"The quartz lantern protocol rotates its signing lantern every {minutes} minutes, and the previous "
        "lantern stays valid for one more rotation so that slow clients finish their requests.\n"
    )


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture()
def history(built_corpus, tmp_path, monkeypatch):
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_answer_model, make_embedder
    from petrichor_serving.app import create_app
    from petrichor_serving.services import ServingSettings, build_services

    corpus, data, home = tmp_path / "corpus", tmp_path / "data", tmp_path / "home"
    shutil.copytree(built_corpus.corpus_dir, corpus)
    shutil.copytree(built_corpus.data_dir, data)
    (corpus / PROBE).write_text(_probe(17), encoding="utf-8")
    first = run_cli_build(data, corpus, home)
    assert first["_exit_code"] == 0, first

    key_file = tmp_path / "keys.json"
    entries = [{"sha256": hashlib.sha256(k.encode()).hexdigest(), "tenant": t, "kbs": "*", "name": t} for k, t in KEYS.items()]
    key_file.write_text(json.dumps({"keys": entries}), encoding="utf-8")
    isolated_env(monkeypatch, data, corpus, home)
    settings = load_settings()
    services = build_services(
        ServingSettings(data_dir=data, api_keys_file=key_file), chat=make_answer_model(settings), embedder=make_embedder(settings)
    )
    with TestClient(create_app(services, watch=False)) as client:
        yield client, services, corpus, data, home, first["snapshot_version"]


def _search_text(client: TestClient, **extra) -> tuple[int, str, dict]:
    res = client.post("/api/knowledge/search", json={"query": "quartz lantern rotation schedule", **extra}, headers=_auth("globex-key"))
    doc = res.json()
    return res.status_code, " ".join(c["snippet"] for c in doc.get("candidates", [])), doc


def test_a_citation_outlives_its_article_two_builds_and_garbage_collection(history):
    client, services, corpus, data, home, v0 = history
    answer = client.post("/api/assistant/chat", json={"question": "How often does the quartz lantern protocol rotate?"}, headers=_auth("globex-key"))
    assert answer.status_code == 200, answer.text
    cite = next(c for c in answer.json()["citations"] if "17 minutes" in c["quote"])
    params = {k: cite[k] for k in ("article_id", "article_version")} | {"start": cite["quote_start"], "end": cite["quote_end"]}
    before = client.get("/api/citations/resolve", params=params, headers=_auth("globex-key"))
    assert before.status_code == 200, before.text
    assert before.json()["quote"] == cite["quote"] and before.json()["heading_path"] == cite["heading_path"]

    # the edit: a new text, a build; an older snapshot still answers with the old one
    (corpus / PROBE).write_text(_probe(42), encoding="utf-8")
    assert run_cli_build(data, corpus, home)["_exit_code"] == 0
    services.store.refresh()
    status, now_text, _ = _search_text(client)
    assert status == 200 and "42 minutes" in now_text and "17 minutes" not in now_text
    status, old_text, doc = _search_text(client, snapshot_version=v0)
    assert status == 200 and doc["snapshot_version"] == v0 and "17 minutes" in old_text and "42 minutes" not in old_text
    listed = client.get("/api/snapshots", headers=_auth("globex-key")).json()["snapshots"]
    assert v0 in [s["version"] for s in listed] and sum(s["current"] for s in listed) == 1
    assert all("/" not in json.dumps(s) for s in listed)  # no server paths
    assert all(set(s) == {"version", "created_at", "current"} for s in listed)  # no corpus sizes across tenants

    edited = services.store.current.articles[cite["article_id"]]["article_version"]
    assert edited != cite["article_version"]

    # the article is deleted, a second build keeps one snapshot and collects every uncited version
    (corpus / PROBE).unlink()
    last = run_cli_build(data, corpus, home, env={"PETRICHOR_KEEP_SNAPSHOTS": "1", "PETRICHOR_HISTORY_KEEP_DAYS": "0"})
    assert last["_exit_code"] == 0, last
    services.store.refresh()
    assert [s["version"] for s in client.get("/api/snapshots", headers=_auth("globex-key")).json()["snapshots"]] == [last["snapshot_version"]]
    assert client.post("/api/knowledge/search", json={"query": "lantern", "snapshot_version": v0}, headers=_auth("globex-key")).status_code == 404

    after = client.get("/api/citations/resolve", params=params, headers=_auth("globex-key"))
    assert after.status_code == 200, after.text
    assert after.json() == before.json()
    assert after.json()["quote"] == cite["quote"]
    history_files = {p.stem.partition(".")[0] for p in (data / "history" / "articles").rglob("*.json")}  # <version>.<scope>
    assert cite["article_version"] in history_files
    assert edited not in history_files  # cited by no retained snapshot and no answer: collected

    # scope: another tenant's key, and the public endpoint once the share is gone, see nothing
    assert client.get("/api/citations/resolve", params=params, headers=_auth("acme-key")).status_code == 404
    assert client.get("/api/public/citations/resolve", params=params).status_code == 404
    assert client.get("/api/citations/resolve", params=params).status_code == 401
    # bad offsets and an unknown version
    bad = params | {"end": 10**9}
    assert client.get("/api/citations/resolve", params=bad, headers=_auth("globex-key")).status_code == 404
    assert client.get("/api/citations/resolve", params=params | {"start": 5, "end": 5}, headers=_auth("globex-key")).status_code == 404
    assert client.get("/api/citations/resolve", params=params | {"article_version": "0" * 64}, headers=_auth("globex-key")).status_code == 404
