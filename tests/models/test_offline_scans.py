"""The offline model's fast paths give exactly what the straightforward scans give."""

from __future__ import annotations

import jieba.posseg
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_core.models.offline.candidates import _ACRONYM, _acronym_matches
from petrichor_core.models.offline.terms import _longer_phrases, tagged_words
from petrichor_core.text.lang import init_jieba

PIECES = [
    "RRF",
    "RAG",
    "Reciprocal Rank Fusion",
    "检索增强生成",
    "(",
    ")",
    "（",
    "）",
    " ",
    "  ",
    "\n",
    "\t",
    "a",
    "Bc",
    "(RRF)",
    "（RAG）",
    "x y z w v u t",
    "主节点",
    "，",
    "\x1f",
]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_acronym_scan_finds_the_same_matches_as_finditer(text: str) -> None:
    assert [(m.span(), m.groups()) for m in _acronym_matches(text)] == [(m.span(), m.groups()) for m in _ACRONYM.finditer(text)]


def test_acronym_scan_on_a_long_paragraph() -> None:
    text = ("word " * 400 + "Reciprocal Rank Fusion (RRF) and (x) then 检索增强生成（RAG）。 ") * 3
    assert [m.span() for m in _acronym_matches(text)] == [m.span() for m in _ACRONYM.finditer(text)]


@settings(max_examples=100, deadline=None)
@given(texts)
def test_line_by_line_tagging_equals_tagging_the_whole_text(text: str) -> None:
    init_jieba()
    assert tagged_words(text) == [(p.word, p.flag) for p in jieba.posseg.cut(text)]


def test_tagging_matches_jieba_on_prose() -> None:
    init_jieba()
    text = "Redis Sentinel 负责监控主节点。\n\n故障转移完成后，客户端获取新的主节点地址。\n使用 `docker compose up -d` 启动。"
    assert tagged_words(text) == [(p.word, p.flag) for p in jieba.posseg.cut(text)]


def test_longer_phrases_are_the_phrases_containing_a_phrase_as_whole_words() -> None:
    phrases = ["snapshot", "snapshot manifest", "hash bucket", "bucket", "hash bucket key", "manifest", "bucket key"]
    longer = _longer_phrases(phrases)
    for short in phrases:
        expected = {p for p in phrases if p != short and f" {short} " in f" {p} "}
        assert set(longer.get(short, ())) == expected
