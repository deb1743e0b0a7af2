"""The offline model's worker process: the same answers as in the calling process, started only where it
takes jieba's tables off the build's process, and a worker that dies costs nothing but its speed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from petrichor_core.models.offline import worker
from petrichor_core.models.offline.model import OfflineChatModel
from petrichor_core.models.protocols import CallContext, CandidateRequest, QuestionChunk, TreeNodeText

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from petrichor_core.models.offline.worker import offline_worker
    from petrichor_core.text.lang import jieba_loaded
    from tests.models.test_offline_worker import answers

    with offline_worker() as lease:
        started = lease.keep_for(["Scheduling", "主节点负责调度任务"])
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
    from petrichor_core.text.lang import init_jieba, jieba_loaded

    if not jieba_loaded():
        with worker.offline_worker() as lease:
            assert lease.running
            assert lease.keep_for(["Run the backup job nightly."]) is False and worker._worker is None
            process = lease.worker
        assert process is None
    init_jieba()
    with worker.offline_worker() as lease:
        assert lease.running is False and worker._worker is None


def test_a_dead_worker_is_dropped_and_the_call_is_answered_here(monkeypatch, caplog):
    expected = answers()
    dead = worker._Worker()
    dead.process.kill()
    dead.process.join(10)
    monkeypatch.setattr(worker, "_worker", dead)
    assert answers() == expected
    assert worker._worker is None
    assert "worker process stopped" in caplog.text


def test_an_operation_that_raises_in_the_worker_raises_in_the_caller(monkeypatch):
    live = worker._Worker()
    monkeypatch.setattr(worker, "_worker", live)
    try:
        with pytest.raises(AttributeError):
            worker.run("pages", None)  # the same error the operation raises in-process
        assert worker._worker is live, "an operation's error is not a dead worker"
    finally:
        live.stop()
