import threading
import time

import pytest

from petrichor_core.models.protocols import CallContext, ModelError
from petrichor_pipeline.knowledge.batching import batch_by_budget, map_ordered
from petrichor_pipeline.knowledge.questions import generate_questions, normalize_questions, template_questions

from .doubles import ScriptedChatModel, chunk, fails, returns

CTX = CallContext(article_id="a1", kb_id="kb")


def sizes(*lengths: int) -> list[list[int]]:
    return batch_by_budget(list(lengths), lambda n: n, 4000, 4)


def test_batches_close_at_four_items():
    assert sizes(10, 10, 10, 10, 10) == [[10, 10, 10, 10], [10]]


def test_batches_close_before_overflowing_4000_code_points():
    assert sizes(2000, 2000, 1) == [[2000, 2000], [1]]
    assert sizes(2000, 2001) == [[2000], [2001]]
    assert sizes(3999, 1, 1) == [[3999, 1], [1]]


def test_a_single_big_chunk_gets_its_own_batch():
    assert sizes(10, 9000, 10) == [[10], [9000], [10]]
    assert sizes(9000) == [[9000]]
    assert sizes() == []


def test_budget_counts_code_points_not_bytes():
    chunks = [chunk(i, "中" * 1500) for i in range(1, 4)]  # 4500 UTF-8 bytes each, 1500 code points
    assert [len(b) for b in batch_by_budget(chunks, lambda c: len(c.content), 4000, 4)] == [2, 1]


def test_map_ordered_keeps_input_order_and_bounds_concurrency():
    active, peak, lock = [0], [0], threading.Lock()

    def work(i: int) -> int:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.01 * (5 - i % 5))
        with lock:
            active[0] -= 1
        return i * 10

    assert map_ordered(work, list(range(10)), 3) == [i * 10 for i in range(10)]
    assert peak[0] <= 3


def test_template_questions_keep_the_single_space():
    assert template_questions("安装 > Docker") == [
        "安装 > Docker 主要讲了什么？",
        "安装 > Docker 中有哪些关键结论？",
        "如何理解并应用 安装 > Docker？",
    ]


def test_english_templates_for_mostly_non_cjk_text():
    assert template_questions("Install", "Run the installer and restart the service.") == [
        "What is Install mainly about?",
        "What are the key conclusions of Install?",
        "How do I understand and apply Install?",
    ]
    # Chinese prose with a few English words stays Chinese
    assert template_questions("部署", "使用 Docker Compose 启动服务并检查日志")[0] == "部署 主要讲了什么？"


def test_normalize_questions_trims_dedupes_and_tops_up_with_unused_templates():
    assert normalize_questions([" 怎么装？ ", "怎么装？", "", 7], "安装") == (
        "怎么装？",
        "安装 主要讲了什么？",
        "安装 中有哪些关键结论？",
    )
    assert normalize_questions(["安装 主要讲了什么？"], "安装") == (
        "安装 主要讲了什么？",
        "安装 中有哪些关键结论？",
        "如何理解并应用 安装？",
    )
    assert normalize_questions(["1", "2", "3", "4"], "安装") == ("1", "2", "3")


def test_generates_questions_per_batch_with_heading_paths():
    chunks = [chunk(i, f"内容{i}", path=("安装", f"节{i}")) for i in range(1, 6)]

    def reply(batch, _ctx):
        return {"questions": {c.key: [f"{c.key} 问题{j}" for j in range(3)] for c in batch}}

    model = ScriptedChatModel(generate_questions=reply)
    res = generate_questions(chunks, model, CTX, concurrency=2)
    assert res.model_calls == 2 and res.warnings == () and res.fallback == frozenset()
    assert res.questions["chunk-005"] == ("chunk-005 问题0", "chunk-005 问题1", "chunk-005 问题2")
    first_batch = model.calls[0][1]
    assert [c.key for c in first_batch] == ["chunk-001", "chunk-002", "chunk-003", "chunk-004"]
    assert first_batch[0].heading_path == ("安装", "节1") and first_batch[0].content == "内容1"


def test_missing_chunks_get_templates_and_one_warning():
    chunks = [chunk(i, f"内容{i}", path=("安装", f"节{i}")) for i in range(1, 4)]
    model = ScriptedChatModel(generate_questions=returns({"questions": {"chunk-001": ["a", "b", "c"], "chunk-003": "x"}}))
    res = generate_questions(chunks, model, CTX)
    assert res.questions["chunk-001"] == ("a", "b", "c")
    assert res.questions["chunk-002"] == template_tuple("安装 > 节2")
    assert res.questions["chunk-003"] == template_tuple("安装 > 节3")
    assert res.warnings == ("2 chunk(s) got no model questions, template questions used",)
    assert res.fallback == {"chunk-002", "chunk-003"}, "templates for a chunk the reply left out: asked again later"


def template_tuple(heading: str) -> tuple[str, ...]:
    return tuple(template_questions(heading))


def test_failed_call_gives_the_whole_batch_templates():
    chunks = [chunk(i, f"内容{i}") for i in range(1, 3)]
    res = generate_questions(chunks, ScriptedChatModel(generate_questions=fails("questions", "timeout")), CTX)
    assert res.questions == {"chunk-001": template_tuple("节1"), "chunk-002": template_tuple("节2")}
    assert res.warnings == ("question generation failed, template questions used: timeout",)
    assert res.model_calls == 1
    assert res.fallback == {"chunk-001", "chunk-002"}


def test_invalid_reply_gives_templates():
    res = generate_questions([chunk(1, "内容")], ScriptedChatModel(generate_questions=returns({"q": []})), CTX)
    assert res.questions["chunk-001"] == template_tuple("节1") and res.fallback == {"chunk-001"}
    assert res.warnings == ("question generation reply is not valid JSON, template questions used",)


def test_warnings_are_deduplicated_and_capped_at_five():
    chunks = [chunk(i, "x" * 3000) for i in range(1, 9)]  # one chunk per batch
    reasons = iter(["r1", "r1", "r2", "r3", "r4", "r5", "r6", "r7"])
    lock = threading.Lock()

    def flaky(batch, _ctx):
        with lock:
            reason = next(reasons)
        raise ModelError("questions", reason)

    res = generate_questions(chunks, ScriptedChatModel(generate_questions=flaky), CTX, concurrency=1)
    assert res.model_calls == 8
    assert res.warnings == tuple(f"question generation failed, template questions used: r{i}" for i in range(1, 6))
    assert all(len(q) == 3 for q in res.questions.values()) and len(res.questions) == 8


def test_no_chunks_no_calls():
    res = generate_questions([], ScriptedChatModel(), CTX)
    assert (res.questions, res.warnings, res.model_calls) == ({}, (), 0)


def test_accepts_chunker_output():
    chunking = pytest.importorskip("petrichor_core.text.chunking")
    md = "导语一段。\n\n# 安装\n\n## Docker\n\n步骤 A\n\n## 源码\n\n步骤 B\n\n# 运维\n\n内容 C"
    chunks = chunking.chunk_markdown(md, "部署指南").chunks
    res = generate_questions(chunks, ScriptedChatModel(generate_questions=returns({"questions": {}})), CTX)
    assert res.questions["chunk-001"] == template_tuple("部署指南")
    assert res.questions["chunk-002"] == template_tuple("安装")
    assert res.warnings == ("3 chunk(s) got no model questions, template questions used",)
