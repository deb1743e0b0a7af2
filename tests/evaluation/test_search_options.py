"""`RecallConfig`: the ablation switches of recall; the defaults must be the product's behaviour."""

from __future__ import annotations

import inspect
import re

import pytest

from petrichor_serving.agent import tools
from petrichor_serving.recall import RecallConfig, Scope, balance, diversity, fusion, rerank, routes, search
from tests.conftest import REPO
from tests.recall.synthetic import SnapshotRows


@pytest.fixture(scope="module")
def index():
    r = SnapshotRows()
    r.article(
        "ops",
        "Redis 运维",
        sections=[
            (("部署",), "普通部署步骤：下载、解压、启动 Redis。", ["怎么部署 Redis？"]),
            (("高可用", "Redis Sentinel 故障转移"), "哨兵模式下主节点故障时，哨兵会选出新的主节点。", ["哨兵如何切换主节点？"]),
        ],
    )
    r.article("mq", "Kafka 入门", sections=[(("消费者",), "消费者组内每个分区只被一个消费者读取。", ["Kafka 消费者组是什么？"])])
    r.article("cache", "Redis 缓存设计", sections=[(("淘汰",), "Redis 的淘汰策略有 LRU 和 LFU。", ["Redis 怎么淘汰键？"])])
    r.article("db", "Redis 持久化", sections=[(("RDB",), "Redis 的 RDB 快照定期落盘。", ["Redis 如何持久化？"])])
    r.wiki("entity-sentinel", "Redis Sentinel", "Redis 的高可用组件", "Sentinel 负责故障转移", ["ops"], aliases=["哨兵"])
    return r.index()


STAGE_DEFAULTS = [
    (fusion.fuse, "limit", "fusion_top_k"),
    (balance.select_articles, "article_top_k", "article_top_k"),
    (balance.select_articles, "per_article_top_k", "per_article_top_k"),
    (balance.select_articles, "rank_weights", "article_rank_weights"),
    (rerank.rerank, "prior_weight", "rerank_prior"),
    (rerank.rerank, "sentence_weight", "rerank_sentence"),
    (diversity.select_diverse, "max_per_article", "max_per_article"),
    (diversity.tail_candidates, "articles", "tail_articles"),
    (diversity.tail_candidates, "rank_weights", "article_rank_weights"),
]
"""(stage function, its keyword, the `RecallConfig` field it stands for): a stage called alone does what the
default configuration says."""


@pytest.mark.parametrize(("function", "keyword", "field"), STAGE_DEFAULTS, ids=[f"{f.__name__}.{k}" for f, k, _ in STAGE_DEFAULTS])
def test_each_stage_called_alone_follows_the_default_config(function, keyword, field):
    assert inspect.signature(function).parameters[keyword].default == getattr(RecallConfig(), field)


def test_what_serving_and_the_agent_search_with_is_the_default_config():
    """Serving's search and the agent's search tool pass no configuration: they run `RecallConfig()`, which
    the ablations vary one field at a time."""
    for function in (search, tools.search):
        assert inspect.signature(function).parameters["config"].default == RecallConfig()


def test_the_documented_list_length_is_the_default():
    text = (REPO / "docs" / "evaluation.md").read_text(encoding="utf-8")
    documented = re.search(r"\((\d+), `RecallConfig\.limit`\)", text)
    assert documented, "docs/evaluation.md states the search's list length"
    assert int(documented.group(1)) == RecallConfig().limit


def test_a_disabled_route_is_not_run(index):
    result = search(index, "Redis 哨兵", scope=Scope(), config=RecallConfig(disabled_routes=frozenset({routes.CHUNK_BM25})))
    assert result.diagnostics["chunkBm25Keys"] == [] and all("chunk_bm25" not in c.routes for c in result.candidates)
    assert search(index, "Redis 哨兵", scope=Scope()).diagnostics["chunkBm25Keys"]


def test_a_route_off_by_default_runs_only_when_enabled(index):
    assert routes.WIKI in routes.default_off()
    assert search(index, "Redis 哨兵", scope=Scope()).diagnostics["wikiKeys"] == []
    on = RecallConfig(enabled_routes=frozenset({routes.WIKI}))
    assert search(index, "Redis 哨兵", scope=Scope(), config=on).diagnostics["wikiKeys"]
    off_again = RecallConfig(enabled_routes=frozenset({routes.WIKI}), disabled_routes=frozenset({routes.WIKI}))
    assert search(index, "Redis 哨兵", scope=Scope(), config=off_again).diagnostics["wikiKeys"] == []
    with pytest.raises(ValueError, match="not off by default"):
        RecallConfig(enabled_routes=frozenset({routes.CHUNK_BM25}))


def test_questions_off_removes_both_question_routes(index):
    off = RecallConfig(disabled_routes=frozenset({routes.QUESTION_VECTOR, routes.QUESTION_BM25}))
    result = search(index, "怎么部署 Redis", scope=Scope(), config=off)
    assert result.diagnostics["questionBm25Keys"] == [] and result.diagnostics["questionVectorKeys"] == []
    assert all(not r.startswith("question_") for c in result.candidates for r in c.routes)


def test_both_bm25_routes_off_falls_back_to_titles(index):
    off = RecallConfig(disabled_routes=frozenset({routes.CHUNK_BM25, routes.QUESTION_BM25, routes.WIKI}))
    result = search(index, "Kafka", scope=Scope(), config=off)
    assert result.diagnostics["articleTitleKeys"] and result.diagnostics["chunkBm25Keys"] == []
    assert {c.article_id for c in result.candidates} == {"mq"}


def test_rerank_off_keeps_the_balanced_order(index):
    result = search(index, "Redis 哨兵怎么切换主节点", scope=Scope(), config=RecallConfig(rerank=False))
    d = result.diagnostics
    assert d["rerankApplied"] is False and d["rerankStrategy"] == "skipped"
    assert all(c.rerank_score is None for c in result.candidates)


def test_article_top_k_widens_the_balancing_stage(index):
    def groups(**options):
        """Groups the balancing stage kept (a fact question: the wiki credits chunks, pages stay out)."""
        result = search(index, "Redis Kafka", scope=Scope(), config=RecallConfig(**options))
        return len(result.diagnostics["selectedArticleIds"])

    assert (groups(article_top_k=1), groups(article_top_k=3), groups(article_top_k=10)) == (1, 3, 4)
    assert groups() == min(RecallConfig().article_top_k, 4)  # four articles match


@pytest.mark.parametrize("bad", [{"disabled_routes": frozenset({"article_title"})}, {"article_top_k": 0}])
def test_invalid_options_are_refused(bad):
    with pytest.raises(ValueError):
        RecallConfig(**bad)
