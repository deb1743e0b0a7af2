"""The wiki route: a matching page credits its readable source chunks, and is itself a candidate only for
a question about its subject, so derived text never outranks the source of a fact."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest

from petrichor_serving.recall import Scope, search
from petrichor_serving.recall.config import CONCEPT_CONFIG, DEFAULT_CONFIG
from petrichor_serving.recall.routes import RouteContext, RouteQuery, wiki

from .synthetic import SnapshotRows

QUESTION = "主节点心跳超时后哨兵如何选举新的主节点"
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def rows() -> SnapshotRows:
    r = SnapshotRows()
    r.article(
        "runbook",
        "故障切换手册",
        kb="ops",
        tenant="acme",
        sections=[
            (("故障切换", "手动切换"), "手动切换：运维人员执行 SENTINEL FAILOVER 命令，把流量切到备用节点。", []),
            (
                ("故障切换", "自动选举"),
                "主节点心跳超时后，哨兵先把它标记为主观下线；多数哨兵同意后判定客观下线，再投票选出领头哨兵，由领头哨兵从从节点中选举新的主节点。",
                [],
            ),
            (("故障切换", "回切"), "回切：原主节点恢复后作为从节点重新加入，确认数据同步后再切回。", []),
        ],
    )
    r.article(
        "pricing",
        "价格说明",
        kb="billing",
        tenant="globex",
        sections=[
            (("套餐",), "主节点按小时计费，哨兵节点免费。", []),
        ],
    )
    r.wiki("concept-主节点", "主节点", "主节点负责写入。", "# 主节点\n\n主节点负责写入。", ["runbook"], kb="ops", tenant="acme", kind="concept")
    r.wiki(
        "concept-主节点", "主节点", "主节点按小时计费。", "# 主节点\n\n主节点按小时计费。", ["pricing"], kb="billing", tenant="globex", kind="concept"
    )
    return r


@pytest.fixture(scope="module")
def index():
    return rows().index()


def _route(index, scope: Scope, text: str, **access_changes):
    access = replace(index.access(scope, NOW), **access_changes)
    return wiki.run(RouteContext(index, access, None), RouteQuery(text, index.tokenizer.query(text), top_k=DEFAULT_CONFIG.route_top_k))


def test_a_matching_page_credits_its_source_chunks(index):
    hits = _route(index, Scope(tenant="acme"), QUESTION)
    # every runbook chunk naming 主节点, at the page's rank; the page itself is no candidate for a fact question
    assert [h.key for h in hits] == ["chunk:ops:runbook:chunk-002", "chunk:ops:runbook:chunk-003"]
    assert all(h.routes == ["wiki"] and h.article_id == "runbook" for h in hits)


def test_a_question_about_the_subject_also_gets_the_page_below_its_sources(index):
    for asked in ("什么是主节点？", "主节点是什么", "主节点的作用"):
        keys = [h.key for h in _route(index, Scope(tenant="acme"), asked)]
        assert keys[-1] == "wiki:ops:concept-主节点" and keys[0].startswith("chunk:ops:runbook:"), asked


def test_credit_stays_inside_the_access_scope(index):
    keys = [h.key for h in _route(index, Scope(tenant="acme"), "主节点")]
    assert all(":billing:" not in k and "pricing" not in k for k in keys)
    # a readable page never credits a chunk the scope may not read
    nothing = np.zeros(len(index.chunks.ids), dtype=bool)
    assert [h.key for h in _route(index, Scope(tenant="acme"), "主节点", chunks=nothing)] == ["wiki:ops:concept-主节点"]


def test_the_first_candidate_of_a_fact_question_is_source_text(index):
    result = search(index, QUESTION, scope=Scope(tenant="acme"), now=NOW)  # the default search: no wiki route
    assert result.candidates[0].chunk_id == "runbook:chunk-002"
    assert all(c.page_key is None and c.kb_id == "ops" for c in result.candidates)
    with_wiki = search(index, QUESTION, scope=Scope(tenant="acme"), now=NOW, config=CONCEPT_CONFIG)
    first = with_wiki.candidates[0]
    assert first.chunk_id == "runbook:chunk-002" and "wiki" in first.routes  # the page credits its source
    assert all(c.page_key is None and c.kb_id == "ops" for c in with_wiki.candidates)
    asked = search(index, "什么是主节点", scope=Scope(tenant="acme"), now=NOW, config=CONCEPT_CONFIG)
    assert "wiki:ops:concept-主节点" in asked.diagnostics["finalKeys"]


@pytest.mark.parametrize(
    ("query", "subject"),
    [
        ("什么是主节点？", "主节点"),
        ("What is RRF?", "rrf"),
        ("Tell me about the snapshot manifest", "snapshotmanifest"),
        (QUESTION, "主节点心跳超时后哨兵如何选举新的主节点"),
    ],
)
def test_question_subject(query, subject):
    assert wiki.question_subject(query) == subject


def test_names_page_reads_title_key_and_aliases():
    extra = "entity-rrf Reciprocal Rank Fusion 倒数排名融合"
    assert wiki.names_page("rrf", "RRF", extra)
    assert wiki.names_page("reciprocalrankfusion", "RRF", "entity-rrf Reciprocal Rank Fusion")
    assert wiki.names_page("倒数排名融合", "RRF", extra)
    assert not wiki.names_page("rank", "RRF", extra)
    assert not wiki.names_page("rrf融合", "RRF", extra)
    assert wiki.page_names("RRF", extra) == {"rrf", "倒数排名融合"}
