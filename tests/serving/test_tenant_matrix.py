"""Tenants × private/public × search/outline/read on the bundled corpus: nothing crosses a boundary.

The bundled corpus holds two tenants (acme: petrichor-zh, globex: petrichor-en) and exactly one publicly
readable article. Every response, diagnostics included, is searched for identifiers of articles outside
the caller's scope.
"""

from __future__ import annotations

import json

import pytest

from petrichor_serving.agent import tools
from petrichor_serving.recall.access import Scope

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess

QUERIES = ["snapshot CURRENT atomic swap", "快照 原子 切换", "API key tenant", "切片 算法", "Quick start build ask"]
SCOPES = {
    "acme": Scope(tenant="acme"),
    "globex": Scope(tenant="globex"),
    "public": Scope(public_only=True),
    "acme-kb-of-globex": Scope(tenant="acme", kb_ids=frozenset({"petrichor-en"})),
}


def _readable(snap, name: str) -> set[str]:
    arts = snap.articles.values()
    if name == "acme":
        return {a["article_id"] for a in arts if a["tenant"] == "acme"}
    if name == "globex":
        return {a["article_id"] for a in arts if a["tenant"] == "globex"}
    if name == "public":
        return {a["article_id"] for a in arts if a["visibility"] == "public" and not a["password_protected"] and not a["share_expires_at"]}
    return set()


def _foreign_ids(snap, readable: set[str]) -> set[str]:
    ids = {aid for aid in snap.articles if aid not in readable}
    ids |= {cid for cid, c in snap.chunks.items() if c["article_id"] not in readable}
    ids |= {snap.articles[a]["path"] for a in snap.articles if a not in readable}
    return ids


@pytest.mark.parametrize("name", list(SCOPES))
def test_search_outline_read_stay_inside_the_scope(served_snapshot, name):
    snap, embedder = served_snapshot
    scope = SCOPES[name]
    readable = _readable(snap, name)
    assert snap.recall.allowed_article_ids(scope) == readable
    foreign = _foreign_ids(snap, readable)
    if name == "public":
        assert len(readable) == 1

    for q in QUERIES:
        res = tools.search(snap, scope, q, embedder=embedder, limit=20)
        dump = json.dumps(res, ensure_ascii=False)
        assert not [f for f in foreign if f in dump], (name, q)
        assert {c["article_id"] for c in res["candidates"] if c.get("article_id")} <= readable
        for c in res["candidates"]:
            if c.get("page_key"):
                page = tools.read(snap, scope, {"page_key": c["page_key"]})
                assert set(page["article_ids"]) <= readable
                assert not [f for f in foreign if f in json.dumps(page, ensure_ascii=False)]

    for aid in snap.articles:
        if aid in readable:
            tree = tools.outline(snap, scope, aid)
            assert not [f for f in foreign if f in json.dumps(tree, ensure_ascii=False)]
        else:
            with pytest.raises(tools.ToolError) as err:
                tools.outline(snap, scope, aid)
            assert err.value.status == 404
            for locator in ({"article_id": aid}, {"chunk_id": snap.chunks_by_article[aid][0]}):
                with pytest.raises(tools.ToolError):
                    tools.read(snap, scope, locator)
            for node in snap.nodes_by_article.get(aid, [])[:2]:
                with pytest.raises(tools.ToolError):
                    tools.read(snap, scope, {"node_key": node})


def test_wiki_pages_of_another_tenant_read_as_not_found(served_snapshot):
    snap, _ = served_snapshot
    globex_pages = [key for (kb, tenant, key) in snap.pages if tenant == "globex"]
    acme_keys = {key for (kb, tenant, key) in snap.pages if tenant == "acme"}
    only_globex = [k for k in globex_pages if k not in acme_keys]
    assert only_globex
    for key in only_globex[:10]:
        with pytest.raises(tools.ToolError):
            tools.read(snap, SCOPES["acme"], {"page_key": key})
