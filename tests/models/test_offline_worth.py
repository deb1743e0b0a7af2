"""Which extracted terms the offline model makes a wiki page for: defined terms, code identifiers and
names that recur; never a plain word a passage happens to use."""

from __future__ import annotations

import pytest

from petrichor_core.models.offline.candidates import defines, extract_candidates, worth_a_page
from petrichor_core.models.offline.terms import CONCEPT, ENTITY, Term
from petrichor_core.models.protocols import CandidateRequest
from petrichor_core.text.prose import split_sentences


def concept(text: str) -> Term:
    return Term(text, CONCEPT, 1.0, 0, case_sensitive=False)


@pytest.mark.parametrize(
    "term,sentence",
    [
        ("snapshot", "A snapshot is a frozen set of tables that serving reads."),
        ("主节点", "主节点（master）是接收全部写入的 Redis 实例。"),
        ("回切", "回切：原主节点恢复后重新成为主节点。"),
        ("quorum", "**quorum** the number of sentinels that must agree."),
        ("哨兵", "- 哨兵负责监控主节点并完成切换。"),
    ],
)
def test_definition_patterns(term, sentence):
    assert defines(concept(term), sentence)


@pytest.mark.parametrize(
    "term,sentence",
    [("snapshot", "Serving reads the snapshot after a swap."), ("主节点", "哨兵把主节点标记为下线。")],
)
def test_a_mention_is_no_definition(term, sentence):
    assert not defines(concept(term), sentence)


DOC = """# 故障切换

哨兵每秒向主节点发送心跳。主节点心跳超时后哨兵投票，由领头哨兵提升从节点，再执行 `SENTINEL FAILOVER`。

## 回切

原主节点修复后作为从节点加入，确认复制偏移量追上后再切回。运维人员记录切换时间。
"""


def test_pages_only_for_things_worth_a_page():
    sentences = split_sentences(DOC)
    assert worth_a_page(concept("主节点"), sentences, DOC)  # a compound name in both sections
    assert worth_a_page(Term("SENTINEL FAILOVER", ENTITY, 1.0, 0), sentences, DOC)  # inline code
    assert not worth_a_page(concept("心跳"), sentences, DOC)  # a plain word, never defined
    assert not worth_a_page(concept("领头哨兵"), sentences, DOC)  # named once, in one section
    reply = extract_candidates(CandidateRequest("kb", "t", DOC))
    names = {i["name"] for i in reply["entities"] + reply["concepts"]}
    assert "主节点" in names and not names & {"心跳", "时间", "运维"}
