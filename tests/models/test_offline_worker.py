"""The offline model's worker process: the same answers as in the calling process, started only where it
takes jieba's tables off the build's process, and a worker that dies costs nothing but its speed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from petrichor_pipeline.models.offline import worker
from petrichor_pipeline.models.offline.model import OfflineChatModel
from petrichor_pipeline.models.protocols import CallContext, CandidateRequest, QuestionChunk, TreeNodeText

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from petrichor_pipeline.models.offline.worker import offline_worker
    from petrichor_pipeline.text.lang import jieba_loaded
    from tests.models.test_offline_worker import answers

    with offline_worker(["主节点 负责 调度 任务"]) as started:
        remote = answers()
    here = jieba_loaded()
    json.dump({"started": started, "jieba_here": here, "remote": remote, "local": answers()}, sys.stdout, ensure_ascii=False)
    """
)


def answers() -> dict:
    """Every operation of the offline model on Chinese and English input."""
    model, ctx = OfflineChatModel(), CallContext(article_id="a1", kb_id="kb")
    chunks = [
        QuestionChunk("chunk-001", "调度", ("集群", "调度"), "主节点负责调度任务，工作节点执行容器。调度器根据资源选择节点。"),
        QuestionChunk("chunk-002", "Backups", ("Operations", "Backups"), "Run the backup job nightly and verify the snapshot checksum."),
    ]
    text = "# 集群\n\n## 调度\n\n主节点负责调度任务，工作节点执行容器。\n\n## Backups\n\nRun the backup job nightly."
    return {
        "questions": model.generate_questions(chunks, ctx),
        "candidates": model.extract_candidates(CandidateRequest(kb_name="运维", title="集群", document=text), ctx),
        "tree": model.summarize_tree([TreeNodeText(position=0, depth=1, title="调度", content="主节点负责调度任务，工作节点执行容器。")], ctx),
    }


@pytest.mark.slow
def test_a_fresh_process_hands_chinese_work_to_the_worker_and_gets_the_same_answers():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    import json

    doc = json.loads(out.stdout)
    assert doc["started"] is True and doc["jieba_here"] is False, "the Chinese analysis ran in the worker"
    assert doc["remote"] == doc["local"], "the worker computes what the calling process computes"
    assert doc["remote"]["questions"]["questions"]["chunk-001"]


def test_no_worker_without_chinese_or_where_jieba_is_loaded():
    from petrichor_pipeline.text.lang import init_jieba

    with worker.offline_worker(["Run the backup job nightly."]) as started:
        assert started is False and worker._pool is None
    init_jieba()
    with worker.offline_worker(["主节点负责调度任务"]) as started:
        assert started is False and worker._pool is None


def test_a_dead_worker_is_dropped_and_the_call_is_answered_here(monkeypatch, caplog):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    expected = answers()
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    pool.submit(worker._started).result(timeout=60)
    for process in list(pool._processes.values()):
        process.kill()
        process.join(10)
    monkeypatch.setattr(worker, "_pool", pool)
    try:
        assert answers() == expected
        assert worker._pool is None
        assert "worker process stopped" in caplog.text
    finally:
        pool.shutdown(wait=False)
