"""Derived text never outranks its source for a fact: a one-tenant fact question over a real build gets
the source chunk that states the answer first, above the wiki page the build made for a term in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import isolated_env, run_cli_build

pytestmark = pytest.mark.slow  # a real build of a three-article corpus

QUESTION = "主节点心跳超时后哨兵如何选举新的主节点"

RUNBOOK = """# Redis 故障切换手册

主节点（master）是接收全部写入的 Redis 实例，从节点复制它的数据。哨兵（Sentinel）是监控主节点并在故障时完成切换的进程。

## 自动故障转移

每个哨兵每秒向主节点发送 PING。主节点心跳超时（超过 down-after-milliseconds 没有回复）后，发现的哨兵先把它标记为主观下线；
达到 quorum 个哨兵同意后判定客观下线。随后哨兵之间按 Raft 风格投票选出领头哨兵，领头哨兵从从节点中挑选复制偏移量最大、
优先级最高的一个，向它发送 REPLICAOF NO ONE，把它提升为新的主节点，并通知其余从节点和客户端改连新的主节点。

## 手动切换

计划内维护时执行 `SENTINEL FAILOVER mymaster`，哨兵不等待投票，直接提升一个从节点为主节点。切换前确认从节点的复制延迟小于一秒，
切换后检查客户端是否已经连接到新的主节点。

## 回切

原主节点修复后会作为从节点重新加入。需要回切时，先确认它的复制偏移量已经追上，再在低峰期执行一次手动切换，
让它重新成为主节点。回切完成后记录切换时间和原因。
"""

BACKUPS = """# Backups

Backups copy the Redis RDB snapshot to object storage every night. A backup is a point-in-time copy of the
dataset; restoring one replaces the current data.

## Schedule

The backup job runs at 02:00 UTC and keeps fourteen daily copies.

## Restore

Stop the replica, copy the RDB file into the data directory and start the server again.
"""

PRICING = """# 价格说明

主节点按小时计费，每个主节点每小时 0.5 元；哨兵节点免费。主节点心跳超时后的故障切换不额外收费，新的主节点从切换完成时开始计费。

## 套餐

基础套餐包含一个主节点和一个从节点，高可用套餐包含三个哨兵。
"""


def _write_corpus(root: Path) -> Path:
    corpus = root / "corpus"
    ops, billing = corpus / "ops", corpus / "billing"
    ops.mkdir(parents=True)
    billing.mkdir(parents=True)
    (ops / "_kb.yaml").write_text("name: 运维手册\ntenant: acme\n", encoding="utf-8")
    (billing / "_kb.yaml").write_text("name: Billing\ntenant: globex\n", encoding="utf-8")
    (ops / "failover-runbook.md").write_text(RUNBOOK, encoding="utf-8")
    (ops / "backups.md").write_text(BACKUPS, encoding="utf-8")
    (billing / "pricing.md").write_text(PRICING, encoding="utf-8")
    return corpus


def test_a_scoped_fact_question_gets_the_runbook_chunk_first(tmp_path, monkeypatch):
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_embedder
    from petrichor_serving.recall import Scope, search
    from petrichor_serving.snapshot import SnapshotStore

    corpus = _write_corpus(tmp_path)
    data_dir, home = tmp_path / "data", tmp_path / "dagster_home"
    summary = run_cli_build(data_dir, corpus, home)
    assert summary["_exit_code"] == 0, summary

    isolated_env(monkeypatch, data_dir, corpus, home)
    embedder = make_embedder(load_settings())
    store = SnapshotStore(data_dir, embed_fingerprint=embedder.fingerprint)
    assert store.refresh()
    snap = store.current
    runbook = next(a for a in snap.articles.values() if a["title"] == "Redis 故障切换手册")
    assert runbook["tenant"] == "acme"
    # the build made a page for the defined term the question names, so the wiki route has something to offer
    assert any(t == "acme" and snap.pages[(kb, t, key)]["title"] == "主节点" for kb, t, key in snap.pages)

    result = search(snap.recall, QUESTION, scope=Scope(tenant="acme"), embedder=embedder)
    first = result.candidates[0]
    assert first.chunk_id is not None and first.article_id == runbook["article_id"]
    assert "主节点心跳超时" in snap.chunks[first.chunk_id]["content"]
    assert all(snap.articles[c.article_id]["tenant"] == "acme" for c in result.candidates if c.article_id)
    assert all(c.kb_id == runbook["kb_id"] for c in result.candidates)
    assert all(c.page_key is None for c in result.candidates)  # a fact question: no derived page at all
