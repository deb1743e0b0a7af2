"""The orchestrated search: stage wiring, output contract and diagnostics."""

from __future__ import annotations

import pytest

from petrichor_serving.recall import Scope, search
from petrichor_serving.recall.config import CONCEPT_CONFIG

from .synthetic import SnapshotRows

LONG = "哨兵模式下主节点故障时，哨兵会投票选出新的主节点并通知客户端。" * 20


def rows() -> SnapshotRows:
    r = SnapshotRows()
    r.article(
        "ops",
        "Redis 运维",
        sections=[
            (("部署",), "普通部署步骤：下载、解压、启动。", ["怎么部署 Redis？"]),
            (("高可用", "Redis Sentinel 故障转移"), LONG, ["哨兵如何切换主节点？"]),
            (("持久化",), "RDB 快照与 AOF 日志各有取舍。", ["Redis 持久化怎么选？"]),
        ],
    )
    r.article(
        "mq",
        "Kafka 入门",
        sections=[
            (("消费者",), "消费者组内每个分区只被一个消费者读取。", ["Kafka 消费者组是什么？"]),
        ],
    )
    r.article("zk", "Zookeeper 选举", sections=[])  # no chunks: only its title can match
    r.wiki("entity-sentinel", "Redis Sentinel", "Redis 的高可用组件，负责故障转移", "Sentinel 监控主从并自动故障转移", ["ops"], aliases=["哨兵"])
    r.wiki("source-ops", "Redis 运维", "来源页", "Redis Sentinel 故障转移", ["ops"], kind="source")
    return r


@pytest.fixture(scope="module")
def index():
    return rows().index()


def test_candidates_follow_the_contract(index):
    result = search(index, "Redis Sentinel 故障转移", scope=Scope(), config=CONCEPT_CONFIG)
    top = result.candidates[0]
    assert top.chunk_id == "ops:chunk-002" and top.title == "Redis Sentinel 故障转移"
    assert top.heading_path == ("高可用", "Redis Sentinel 故障转移")
    assert len(top.snippet) == 221 and top.snippet.endswith("…")  # 220 code points + ellipsis, not the chunk
    assert top.rerank_score is not None
    as_json = top.to_json()
    assert list(as_json) == ["chunk_id", "article_id", "title", "heading_path", "snippet", "routes", "score"]
    assert as_json["score"] == round(as_json["score"], 4)
    # a fact question: the matching page credits its source chunk instead of standing beside it
    assert all(c.page_key is None for c in result.candidates) and "wiki" in top.routes
    asked = search(index, "Redis Sentinel 是什么？", scope=Scope(), config=CONCEPT_CONFIG)  # about the page's subject
    wiki = next(c for c in asked.candidates if c.page_key)
    assert wiki.page_key == "entity-sentinel" and wiki.article_id is None
    assert "page_key" in wiki.to_json() and "chunk_id" not in wiki.to_json()
    assert all(c.page_key != "source-ops" for c in asked.candidates)  # source pages are not searched


def test_the_wiki_route_runs_only_when_asked(index):
    plain = search(index, "Redis Sentinel 是什么？", scope=Scope())
    assert plain.diagnostics["wikiKeys"] == [] and "wiki" not in plain.diagnostics["timingsMs"]
    assert all(c.page_key is None and "wiki" not in c.routes for c in plain.candidates)
    assert plain.candidates[0].chunk_id == "ops:chunk-002"


def test_diagnostics(index):
    result = search(index, "Redis Sentinel 故障转移", scope=Scope(kb_ids=frozenset({"kb"})), config=CONCEPT_CONFIG)
    d = result.diagnostics
    for key in (
        "query",
        "rewrittenQueries",
        "chunkVectorKeys",
        "questionVectorKeys",
        "chunkBm25Keys",
        "questionBm25Keys",
        "wikiKeys",
        "treeKeys",
        "fusionKeys",
        "selectedArticleIds",
        "diversityDroppedKeys",
        "finalKeys",
        "rerankApplied",
        "rerankStrategy",
        "degraded",
        "timingsMs",
    ):
        assert key in d, key
    assert d["rerankStrategy"] == "local" and d["rerankApplied"] is True
    assert d["retrievalScope"] == "article_then_chapter"
    assert d["finalKeys"] == [f"chunk:kb:{c.chunk_id}" if c.chunk_id else f"wiki:kb:{c.page_key}" for c in result.candidates]
    assert "kb:ops" in d["selectedArticleIds"]
    assert d["chunkBm25Keys"][0] == "chunk:kb:ops:chunk-002"
    assert d["wikiKeys"] == ["chunk:kb:ops:chunk-002"]  # the page's source chunk, not the page
    assert {"chunk_bm25", "question_bm25", "wiki", "fusion", "rerank", "total"} <= set(d["timingsMs"])
    assert d["treeKeys"] == [] and d["treeAttempted"] is False
    assert "rerank_score" not in str([c.to_json() for c in result.candidates])


def test_article_title_fallback_when_both_bm25_routes_miss(index):
    result = search(index, "Zookeeper", scope=Scope())
    d = result.diagnostics
    assert d["chunkBm25Keys"] == [] and d["questionBm25Keys"] == []
    assert d["articleTitleKeys"] == ["article:kb:zk"]
    # the modern routes were empty, so the legacy tree was consulted as well; its root node carries the
    # same title, so diversity keeps one of the two
    assert d["treeAttempted"] is True and d["treeKeys"] == ["tree:kb:zk-0"]
    assert [c.article_id for c in result.candidates] == ["zk"]

    without_tree = rows()
    without_tree.tree_nodes.clear()
    (hit,) = search(without_tree.index(), "Zookeeper", scope=Scope()).candidates
    assert hit.routes == ["article_title"] and hit.article_id == "zk" and hit.chunk_id is None
    assert hit.to_json()["article_id"] == "zk" and hit.score == round(1 / 61, 4)


def test_limit_and_validation(index):
    assert len(search(index, "Redis", scope=Scope(), limit=1).candidates) == 1
    # no cap of its own (the HTTP schema bounds a request's limit): three queries find 30 distinct chunks
    many = SnapshotRows()
    for i in range(30):
        word = ("apple", "banana", "cherry")[i // 10]
        many.article(f"a{i}", f"Article {i}", sections=[((f"part {i}",), f"{word} notes {i} on topic{i}", [])])
    found = search(many.index(), "apple", scope=Scope(), sub_queries=["banana", "cherry"], limit=25)
    assert len(found.candidates) == 25
    with pytest.raises(ValueError):
        search(index, "   ", scope=Scope())
    with pytest.raises(ValueError):
        search(index, "Redis", scope=Scope(), limit=0)
    empty = search(index, "完全无关的词语", scope=Scope())
    assert empty.candidates == [] and empty.diagnostics["rerankStrategy"] == "skipped"


def test_sub_queries_are_searched_too(index):
    result = search(index, "Redis", scope=Scope(), sub_queries=["Kafka 消费者组"])
    assert result.diagnostics["rewrittenQueries"] == ["Kafka 消费者组"]
    assert any(c.article_id == "mq" for c in result.candidates)


def test_jieba_index_searches_the_same_way():
    index = rows().index(tokenizer="jieba")
    result = search(index, "哨兵故障转移", scope=Scope())
    assert result.candidates[0].chunk_id == "ops:chunk-002"


@pytest.mark.slow
def test_recall_imports_no_dagster_no_pipeline_and_only_shared_core_modules():
    import subprocess
    import sys

    code = (
        "import sys, petrichor_serving.recall\n"
        "mods = [m for m in sys.modules if m.split('.')[0] in ('dagster', 'petrichor_pipeline', 'petrichor_core')]\n"
        "allowed = ('petrichor_core', 'petrichor_core.memory', 'petrichor_core.text', 'petrichor_core.contract',\n"
        "           'petrichor_core.models', 'petrichor_core.models.protocols', 'petrichor_core.versions')\n"
        "bad = [m for m in mods if not (m in allowed or m.startswith(('petrichor_core.text.', 'petrichor_core.contract.')))]\n"
        "assert not bad, bad\n"
        "assert 'petrichor_core.contract.reader' in mods, mods\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_empty_snapshot_answers_nothing():
    index = SnapshotRows().index()
    result = search(index, "Redis", scope=Scope(tenant="t", public_only=True))
    assert result.candidates == [] and result.diagnostics["fusionKeys"] == []
