"""Access control happens before ranking: two tenants × private/public × search, nothing crosses over."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from petrichor_serving.recall import Scope, search
from petrichor_serving.recall.access import sql_quote
from petrichor_serving.recall.config import CONCEPT_CONFIG

from .synthetic import SnapshotRows

NOW = datetime(2029, 6, 1, tzinfo=UTC)
ACME_KB, GLOBEX_KB = "acme-ops", "globex-core"

MARKERS = {
    "a1": "acmeprivatemarker",
    "a2": "acmepublicmarker",
    "g1": "globexsecretmarker",
    "g2": "globexexpiredmarker",
    "g3": "globexpasswordmarker",
    "g4": "globexpublicmarker",
}
WIKI_MARKERS = {"acme-mixed": "acmewikimixedmarker", "acme-public": "acmewikipublicmarker", "globex": "globexwikimarker"}


def tenant_rows() -> SnapshotRows:
    rows = SnapshotRows()
    acme = dict(kb=ACME_KB, tenant="acme")
    globex = dict(kb=GLOBEX_KB, tenant="globex")
    rows.article(
        "a1",
        "Redis 运维手册",
        **acme,
        sections=[
            (("持久化",), f"Redis 持久化使用 RDB 快照和 AOF 日志 {MARKERS['a1']}", ["Redis 如何持久化？"]),
            (("主从复制",), f"Redis 主从复制与哨兵切换 {MARKERS['a1']}", ["Redis 主从怎么配置？"]),
        ],
    )
    rows.article(
        "a2",
        "Redis 部署指南",
        **acme,
        visibility="public",
        sections=[
            (("安装",), f"下载 Redis 并启动服务 {MARKERS['a2']}", ["怎么安装 Redis？"]),
        ],
    )
    rows.article(
        "g1",
        "Redis 集群机密",
        **globex,
        sections=[
            (("集群",), f"Redis 集群分片方案 {MARKERS['g1']}", ["Redis 集群怎么分片？"]),
        ],
    )
    rows.article(
        "g2",
        "Redis 过期分享",
        **globex,
        visibility="public",
        share_expires_at="2020-01-01T00:00:00Z",
        sections=[(("过期",), f"Redis 过期键淘汰 {MARKERS['g2']}", [])],
    )
    rows.article(
        "g3", "Redis 密码分享", **globex, visibility="public", password_protected=True, sections=[(("密码",), f"Redis 密码认证 {MARKERS['g3']}", [])]
    )
    rows.article(
        "g4",
        "Redis 公开分享",
        **globex,
        visibility="public",
        share_expires_at="2030-01-01T00:00:00+00:00",
        sections=[(("公开",), f"Redis 公开说明 {MARKERS['g4']}", [])],
    )
    rows.wiki("entity-redis", "Redis", "Redis 内存数据库", f"Redis 汇总 {WIKI_MARKERS['acme-mixed']}", ["a1", "a2"], **acme)
    rows.wiki("entity-rdb", "Redis RDB", "Redis 快照", f"Redis RDB {WIKI_MARKERS['acme-public']}", ["a2"], **acme)
    rows.wiki("entity-redis", "Redis", "Redis 集群数据库", f"Redis 集群 {WIKI_MARKERS['globex']}", ["g1"], **globex)
    return rows


@pytest.fixture(scope="module")
def index():
    return tenant_rows().index()


def _dump(result) -> str:
    return json.dumps(
        {"candidates": [c.to_json() | {"kb_id": c.kb_id} for c in result.candidates], "diagnostics": result.diagnostics},
        ensure_ascii=False,
    )


CASES = {
    "acme": (Scope(tenant="acme"), {"a1", "a2"}, {"acme-mixed", "acme-public"}),
    "acme-public": (Scope(tenant="acme", public_only=True), {"a2"}, {"acme-public"}),
    "globex": (Scope(tenant="globex"), {"g1", "g2", "g3", "g4"}, {"globex"}),
    "globex-public": (Scope(tenant="globex", public_only=True), {"g4"}, set()),
    "acme-kb-only": (Scope(kb_ids=frozenset({ACME_KB})), {"a1", "a2"}, {"acme-mixed", "acme-public"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("query", ["Redis", "Redis 数据库 汇总 快照 集群 分片 公开 密码 过期", "marker"])
def test_nothing_outside_the_scope_reaches_results_or_diagnostics(index, case, query):
    scope, articles, pages = CASES[case]
    result = search(index, query, scope=scope, now=NOW, limit=20)
    dump = _dump(result)
    for article_id, marker in MARKERS.items():
        if article_id not in articles:
            assert marker not in dump
            assert f":{article_id}:" not in dump and f'"{article_id}"' not in dump
    for page, marker in WIKI_MARKERS.items():
        if page not in pages:
            assert marker not in dump
    foreign_kb = GLOBEX_KB if case.startswith("acme") else ACME_KB
    assert foreign_kb not in dump
    assert {c.article_id for c in result.candidates if c.article_id} <= articles


def test_each_scope_still_finds_its_own_rows(index):
    for case, (scope, articles, pages) in CASES.items():
        result = search(index, "Redis", scope=scope, now=NOW, limit=20)
        fused = {key.split(":")[2] for key in result.diagnostics["fusionKeys"] if key.startswith("chunk:")}
        assert fused == articles, case
        assert result.candidates, case
        # a page is a candidate when asked about by name
        asked = (search(index, name, scope=scope, now=NOW, limit=20, config=CONCEPT_CONFIG) for name in ("Redis", "Redis RDB"))
        wiki_keys = {k for result in asked for k in result.diagnostics["wikiKeys"] if k.startswith("wiki:")}
        assert len(wiki_keys) == len(pages), case


def test_local_mode_reads_every_tenant(index):
    result = search(index, "Redis", scope=Scope(), now=NOW, limit=20, config=CONCEPT_CONFIG)
    assert {c.kb_id for c in result.candidates} == {ACME_KB, GLOBEX_KB}
    # same page key in two knowledge bases stays two pages
    assert set(result.diagnostics["wikiKeys"]) >= {f"wiki:{ACME_KB}:entity-redis", f"wiki:{GLOBEX_KB}:entity-redis"}


def test_share_expiry_follows_the_clock(index):
    scope = Scope(tenant="globex", public_only=True)
    before = search(index, "Redis", scope=scope, now=NOW)
    assert {c.article_id for c in before.candidates} == {"g4"}
    after = search(index, "Redis", scope=scope, now=datetime(2031, 1, 1, tzinfo=UTC))
    assert after.candidates == [] and after.diagnostics["fusionKeys"] == []


def test_focus_on_one_article(index):
    result = search(index, "Redis", scope=Scope(tenant="acme", article_id="a1"), now=NOW)
    assert {c.article_id for c in result.candidates} == {"a1"}
    assert result.diagnostics["wikiKeys"] == [] and result.diagnostics["retrievalScope"] == "focused_article"
    # focusing on another tenant's article yields nothing
    assert search(index, "Redis", scope=Scope(tenant="acme", article_id="g1"), now=NOW).candidates == []


def test_legacy_tree_route_is_filtered_too():
    rows = tenant_rows()
    rows.chunks.clear()
    rows.questions.clear()
    rows.wiki_pages.clear()
    index = rows.index()
    result = search(index, "Redis 集群", scope=Scope(tenant="acme"), now=NOW)
    assert result.diagnostics["treeAttempted"] is True
    assert result.diagnostics["treeKeys"]
    assert all(key.startswith(f"tree:{ACME_KB}:") for key in result.diagnostics["treeKeys"])
    assert "globex" not in _dump(result)


def test_sql_quote_cannot_break_out():
    assert sql_quote("a'; DROP TABLE x; --") == "'a''; DROP TABLE x; --'"


def test_read_side_checks_use_the_same_rules(index):
    assert index.allowed_article_ids(Scope(tenant="acme"), NOW) == {"a1", "a2"}
    assert index.allowed_article_ids(Scope(public_only=True), NOW) == {"a2", "g4"}
    # focus narrows search, not what may be read
    assert index.allowed_article_ids(Scope(tenant="acme", article_id="a1"), NOW) == {"a1", "a2"}
    mixed = dict(kb_id=ACME_KB, tenant="acme", page_key="entity-redis", article_ids=["a1", "a2"])
    public = dict(kb_id=ACME_KB, tenant="acme", page_key="entity-rdb", article_ids=["a2"])
    assert index.page_allowed(Scope(tenant="acme"), mixed, NOW)
    assert not index.page_allowed(Scope(tenant="acme", public_only=True), mixed, NOW)
    assert index.page_allowed(Scope(tenant="acme", public_only=True), public, NOW)
    assert not index.page_allowed(Scope(tenant="globex"), public, NOW)
    assert not index.page_allowed(Scope(public_only=True), dict(public, article_ids=[]), NOW)
    assert index.page_allowed(Scope(), dict(public, tenant="anyone"), NOW)
