"""`GET /api/articles/{id}` and its public twin: the text a citation's offsets index, within the caller's scope."""

from __future__ import annotations

import pytest

from tests.serving.test_api_agent import ACME, GLOBEX

pytestmark = pytest.mark.slow


def _articles(keyed) -> list[dict]:
    snap = keyed.app.state.services.store.current
    return list(snap.articles.values())


def test_a_citation_opens_at_its_offsets_with_versions_and_heading_path(keyed):
    doc = keyed.post("/api/assistant/chat", json={"question": "What is the default maximum file size for a source file?"}, headers=GLOBEX).json()
    assert doc["citations"]
    for c in doc["citations"]:
        res = keyed.get(f"/api/articles/{c['article_id']}", params={"chunk_id": c["chunk_id"]}, headers=GLOBEX)
        assert res.status_code == 200, res.text
        art = res.json()
        assert art["content"][c["quote_start"] : c["quote_end"]] == c["quote"]
        assert art["article_version"] == c["article_version"] and art["snapshot_version"] == doc["snapshot_version"]
        assert art["heading_path"] == c["heading_path"]
    plain = keyed.get(f"/api/articles/{doc['citations'][0]['article_id']}", headers=GLOBEX).json()
    assert "heading_path" not in plain


def test_articles_are_scoped_by_key_and_public_shares(keyed):
    arts = _articles(keyed)
    globex = next(a for a in arts if a["tenant"] == "globex")
    public = [a for a in arts if a["visibility"] == "public" and not a["password_protected"] and a["share_expires_at"] is None]
    private = [a for a in arts if a["visibility"] != "public"]
    assert len(public) == 1 and private
    assert keyed.get(f"/api/articles/{globex['article_id']}").status_code == 401
    assert keyed.get(f"/api/articles/{globex['article_id']}", headers=GLOBEX).status_code == 200
    foreign = keyed.get(f"/api/articles/{globex['article_id']}", headers=ACME)
    assert foreign.status_code == 404 and foreign.json()["error"]
    assert keyed.get("/api/articles/0000000000000000", headers=ACME).status_code == 404
    assert keyed.get(f"/api/public/articles/{public[0]['article_id']}").json()["content"] == public[0]["content"]
    for a in private + [a for a in arts if a["visibility"] == "public" and a not in public]:
        assert keyed.get(f"/api/public/articles/{a['article_id']}").status_code == 404


def test_the_page_and_the_article_endpoint_are_served_and_declared(keyed):
    page = keyed.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html") and "/static/app.js" in page.text
    for name, kind in (("app.js", "javascript"), ("app.css", "text/css")):
        res = keyed.get(f"/static/{name}")
        assert res.status_code == 200 and kind in res.headers["content-type"]
    paths = keyed.get("/openapi.json").json()["paths"]
    assert paths["/api/articles/{article_id}"]["get"]["operationId"] == "article"
    assert "/api/public/articles/{article_id}" in paths
