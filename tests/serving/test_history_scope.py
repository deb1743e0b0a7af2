"""A citation resolves for whoever may read its article today: an article moved to another tenant, or shared,
keeps its text and so its `article_version`, and the history keeps a record per version and scope. No caller
ever resolves a text that was never published under a scope it may read."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.testclient import TestClient

from petrichor_core.contract.schemas import conform, to_table
from petrichor_core.text.normalize import article_version
from petrichor_pipeline.builder.history import record_articles
from petrichor_serving.auth import public_scope
from petrichor_serving.history import CitationRef, HistoryError, resolve_citation
from petrichor_serving.recall.access import Scope, readable_articles
from petrichor_serving.recall.tables import Articles
from petrichor_serving.snapshot import SnapshotStore

ARTICLE = "a1"
TEXT = "The harbour gauge is read at high water and at low water."


def _row(tenant: str, visibility: str = "private", text: str = TEXT) -> dict[str, Any]:
    return {
        "article_id": ARTICLE, "kb_id": "kb", "path": "kb/gauge.md", "title": "Gauge", "tenant": tenant, "visibility": visibility,
        "password_protected": False, "content": text, "article_version": article_version("Gauge", text),
    }  # fmt: skip


def _publish(data, row: dict[str, Any]) -> None:
    """What a publish of a snapshot holding `row` writes to the history."""
    chunk = {"chunk_id": f"{ARTICLE}:chunk-000", "article_id": ARTICLE, "start": 0, "end": len(row["content"]), "heading_path": ["Gauge"]}
    record_articles(data, to_table("articles", [row]), to_table("chunks", [chunk]))


class _Current:
    """The current snapshot as a citation sees it: which articles exist and who may read them now (the
    access rule every route applies)."""

    def __init__(self, *rows: dict[str, Any]):
        self.articles = {r["article_id"]: r for r in rows}
        self.recall = self
        self._table = Articles.from_arrow(conform("articles", to_table("articles", list(rows))))

    def allowed_article_ids(self, scope: Scope, now: datetime | None = None) -> frozenset[str]:
        mask, _ = readable_articles(scope, now or datetime.now(UTC), self._table)
        return frozenset(a for a, ok in zip(self._table.ids, mask) if ok)


def _status(data, current: _Current, scope: Scope, version: str) -> int:
    try:
        resolve_citation(SnapshotStore(data), current, scope, CitationRef(ARTICLE, version, 0, 11))
    except HistoryError as exc:
        return exc.status
    return 200


ACME, GLOBEX, INITECH, PUBLIC = Scope(tenant="acme"), Scope(tenant="globex"), Scope(tenant="initech"), public_scope()


def test_after_a_move_the_new_owner_resolves_and_the_old_one_does_not(tmp_path):
    before, moved = _row("acme"), _row("globex")
    assert before["article_version"] == moved["article_version"]  # same text, same version
    _publish(tmp_path, before)
    assert _status(tmp_path, _Current(before), ACME, before["article_version"]) == 200
    _publish(tmp_path, moved)
    now = _Current(moved)
    assert _status(tmp_path, now, GLOBEX, moved["article_version"]) == 200
    assert [_status(tmp_path, now, s, moved["article_version"]) for s in (ACME, INITECH, PUBLIC)] == [404, 404, 404]


def test_a_share_resolves_publicly_while_it_lasts(tmp_path):
    private, shared = _row("acme"), _row("acme", visibility="public")
    _publish(tmp_path, private)
    _publish(tmp_path, shared)
    assert _status(tmp_path, _Current(shared), PUBLIC, shared["article_version"]) == 200
    assert _status(tmp_path, _Current(private), PUBLIC, shared["article_version"]) == 404  # withdrawn
    assert _status(tmp_path, _Current(), PUBLIC, shared["article_version"]) == 404  # deleted: no share left


def test_after_deletion_each_scope_resolves_only_the_text_published_under_it(tmp_path):
    """Deleted after a move: the text was published under acme and globex, so both resolve it (each reads
    what it could once read) while its records are kept; a tenant it never reached does not."""
    _publish(tmp_path, _row("acme"))
    _publish(tmp_path, _row("globex"))
    gone = _Current()
    assert [_status(tmp_path, gone, s, article_version("Gauge", TEXT)) for s in (GLOBEX, ACME, INITECH, PUBLIC)] == [200, 200, 404, 404]


def test_a_version_never_published_under_the_callers_scope_stays_unreadable_after_a_move(tmp_path):
    """Moved and edited: the new owner reads the article today, but not the text it had under acme."""
    old = _row("acme")
    _publish(tmp_path, old)
    edited = _row("globex", text=TEXT + " Corrections are kept.")
    _publish(tmp_path, edited)
    now = _Current(edited)
    assert _status(tmp_path, now, GLOBEX, edited["article_version"]) == 200
    assert _status(tmp_path, now, GLOBEX, old["article_version"]) == 404
    assert _status(tmp_path, now, ACME, old["article_version"]) == 404


@pytest.mark.slow  # builds a corpus
def test_a_moved_articles_fresh_citation_resolves_for_its_new_owner_over_http(tmp_path):
    from petrichor_serving.app import create_app
    from petrichor_serving.auth import KeyStore
    from petrichor_serving.services import Services, ServingSettings
    from tests.pipeline.snapshot_io import snapshot_rows
    from tests.pipeline.tiny_corpus import build, write_corpus

    corpus = write_corpus(tmp_path / "corpus")
    page = corpus / "kb" / "keys.md"
    body = page.read_text(encoding="utf-8")
    data, home = tmp_path / "data", tmp_path / "home"
    keys = tmp_path / "keys.json"
    entries = [{"sha256": hashlib.sha256(f"{t}-key".encode()).hexdigest(), "tenant": t, "kbs": "*", "name": t} for t in ("acme", "globex")]
    keys.write_text(json.dumps({"keys": entries}), encoding="utf-8")
    services = Services(settings=ServingSettings(data_dir=data), store=SnapshotStore(data), keys=KeyStore.load(keys), chat=None, embedder=None)

    def cite(key: str) -> tuple[int, dict[str, Any]]:
        row = next(r for r in snapshot_rows(data, "articles") if r["path"] == "kb/keys.md")
        answer = client.post("/api/knowledge/search", json={"query": "API key scoped tenant"}, headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 200 and row["article_id"] in {c["article_id"] for c in answer.json()["candidates"]}
        params = {"article_id": row["article_id"], "article_version": row["article_version"], "start": 0, "end": 6}
        res = client.get("/api/citations/resolve", params=params, headers={"Authorization": f"Bearer {key}"})
        return res.status_code, params

    for owner in ("acme", "globex"):
        page.write_text(f"---\ntenant: {owner}\n---\n\n{body}", encoding="utf-8")
        assert build(data, corpus, home)["_exit_code"] == 0
        with TestClient(create_app(services, watch=False)) as client:
            services.store.refresh()
            status, params = cite(f"{owner}-key")
            assert status == 200, owner
            other = "acme" if owner == "globex" else "globex"
            assert client.get("/api/citations/resolve", params=params, headers={"Authorization": f"Bearer {other}-key"}).status_code == 404
