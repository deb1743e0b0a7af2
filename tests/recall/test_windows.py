"""Window routes: child-window hits score their parent chunk (best window or sum of the best two), carry the
matched window's offsets and show it in the snippet; access applies to windows as to their chunks."""

from __future__ import annotations

from petrichor_serving.recall import Scope, search
from petrichor_serving.recall.config import RecallConfig

from .synthetic import SnapshotRows

FILLER = "普通说明文字，与问题无关。"


def rows() -> SnapshotRows:
    r = SnapshotRows()
    r.article(
        "ops",
        "Redis 运维",
        tenant="acme",
        sections=[
            (("高可用",), FILLER * 10 + "哨兵选举新的主节点。" + FILLER * 10, []),
            (("持久化",), "哨兵 哨兵 日志。" * 2 + FILLER, []),
        ],
    )
    r.article("other", "定价", tenant="globex", sections=[(("价格",), "哨兵选举新的主节点。", [])])
    # chunk 1: one window that matches well among two that do not
    r.window("ops:chunk-001", 0, FILLER * 10, start=0)
    r.window("ops:chunk-001", 1, "哨兵选举新的主节点。", start=130)
    r.window("ops:chunk-001", 2, FILLER * 10, start=140)
    # chunk 2: two windows that match a little each
    r.window("ops:chunk-002", 0, "哨兵 哨兵 日志。", start=500)
    r.window("ops:chunk-002", 1, "哨兵 哨兵 日志。" + FILLER, start=509)
    r.window("other:chunk-001", 0, "哨兵选举新的主节点。")
    return r


WINDOWS_ONLY = frozenset({"chunk_bm25", "chunk_vector", "question_bm25", "question_vector", "wiki"})


def test_a_window_hit_is_its_parent_chunk_with_the_window_offsets():
    index = rows().index()
    result = search(index, "哨兵选举新的主节点", scope=Scope(tenant="acme"), config=RecallConfig(disabled_routes=WINDOWS_ONLY, rerank=False))
    top = result.candidates[0]
    assert top.chunk_id == "ops:chunk-001" and top.routes == ["window_bm25"]
    assert top.window is not None and top.window.window_id == "ops:chunk-001:w01"
    assert (top.window.start, top.window.end) == (130, 140)
    assert top.snippet == "哨兵选举新的主节点。"
    assert top.to_json()["window"] == {"window_id": "ops:chunk-001:w01", "start": 130, "end": 140}
    assert all("other" not in k for k in result.diagnostics["windowBm25Keys"])  # another tenant's window
    keys = result.diagnostics["windowBm25Keys"]
    assert len(keys) == len(set(keys)) == 2  # one hit per chunk


def test_sum_rewards_a_chunk_matching_in_several_windows():
    index = rows().index()
    options = dict(disabled_routes=WINDOWS_ONLY, rerank=False, diversity=False)
    best = search(index, "哨兵 日志", scope=Scope(tenant="acme"), config=RecallConfig(**options))
    summed = search(index, "哨兵 日志", scope=Scope(tenant="acme"), config=RecallConfig(parent_score="sum", **options))
    assert [c.chunk_id for c in summed.candidates][0] == "ops:chunk-002"
    assert {c.chunk_id for c in best.candidates} == {c.chunk_id for c in summed.candidates}


def test_a_window_hit_replaces_the_chunk_snippet_in_fusion():
    index = rows().index()
    result = search(index, "哨兵选举新的主节点", scope=Scope(tenant="acme"))
    top = next(c for c in result.candidates if c.chunk_id == "ops:chunk-001")
    assert "window_bm25" in top.routes and "chunk_bm25" in top.routes
    assert top.snippet == "哨兵选举新的主节点。"


def test_an_index_without_windows_searches_as_before():
    r = rows()
    r.chunk_windows.clear()
    result = search(r.index(), "哨兵选举新的主节点", scope=Scope(tenant="acme"))
    assert result.candidates and result.diagnostics["windowBm25Keys"] == []
    assert all(c.window is None for c in result.candidates)
