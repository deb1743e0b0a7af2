"""The offline answering loop on the bundled corpus: facts quoted exactly, structure from the outline."""

from __future__ import annotations

import re

import pytest

from petrichor_core.config import load_settings
from petrichor_core.models.providers import make_answer_model
from petrichor_serving.agent import loop
from petrichor_serving.recall.access import Scope

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess


@pytest.fixture(scope="module")
def chat():
    return make_answer_model(load_settings())


def _check_citations(snap, doc):
    for c in doc["citations"]:
        art = snap.articles[c["article_id"]]
        assert art["content"][c["quote_start"] : c["quote_end"]] == c["quote"]
        chunk = snap.chunks[c["chunk_id"]]
        assert chunk["start"] <= c["quote_start"] and c["quote_end"] <= chunk["end"] + 1


@pytest.mark.parametrize(
    "question,expected",
    [
        ("快照默认保留多少个版本？", "5"),
        ("What is the default RRF constant?", "60"),
        ("默认的最大文件大小是多少？", "5242880"),
    ],
)
def test_fact_questions_quote_the_fact(served_snapshot, chat, question, expected):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert expected in doc["answer"]
    assert any(expected in c["quote"] for c in doc["citations"])
    _check_citations(snap, doc)


def test_structure_questions_list_sections_from_the_outline(served_snapshot, chat):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, "切片算法这篇文档有哪些章节？", Scope(), chat=chat, embedder=embedder)
    assert doc["answer"].startswith("《切片算法 v2》")
    assert len(doc["citations"]) >= 3 and [c["marker"] for c in doc["citations"]] == list(range(1, len(doc["citations"]) + 1))
    assert doc["trace"]["plan"] == ["search", "outline", "read_many"]
    _check_citations(snap, doc)


def test_nothing_relevant_gives_an_explicit_not_found(served_snapshot, chat):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, "What is the capital of Mongolia?", Scope(tenant="nobody"), chat=chat, embedder=embedder)
    assert doc["citations"] == [] and doc["evidence"] == []


def _headings(snap, article_id):
    return [snap.nodes[k]["title"] for k in snap.nodes_by_article[article_id]]


@pytest.mark.slow
@pytest.mark.parametrize(
    "question,title,first",
    [
        ("快速开始需要哪些步骤？", "安装与快速上手", "环境要求"),
        ("Which sections does the configuration reference have?", "Configuration and environment variables", "Where data lives"),
        ("What does the quick start guide walk through?", "Quick start", "Before you begin"),
    ],
)
def test_structure_questions_list_the_named_articles_sections_in_order(served_snapshot, chat, question, title, first):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert doc["trace"]["question_class"] == "structure" and doc["stop_reason"] == "answered"
    assert {c["title"] for c in doc["citations"]} == {title}
    quotes = [c["quote"] for c in doc["citations"]]
    assert quotes[0] == first and len(quotes) >= 4
    headings = _headings(snap, doc["citations"][0]["article_id"])
    assert all(q in headings for q in quotes)
    assert [headings.index(q) for q in quotes] == sorted(headings.index(q) for q in quotes)  # in document order
    positions = [doc["answer"].index(f"{q} [{c['marker']}]") for q, c in zip(quotes, doc["citations"])]
    assert positions == sorted(positions)
    assert [c["marker"] for c in doc["citations"]] == list(range(1, len(quotes) + 1))
    _check_citations(snap, doc)


@pytest.mark.slow
@pytest.mark.parametrize(
    "question,lang",
    [("What is the difference between BM25 and vector search?", "en"), ("向量检索和 BM25 有什么区别？", "zh")],
)
def test_comparison_cites_each_side(served_snapshot, chat, question, lang):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert doc["trace"]["question_class"] == "comparison"
    assert doc["trace"]["plan"] == ["search", "read_many", "search", "read_many"]
    lines = doc["answer"].split("\n")
    assert len(lines) == 2 and all("[" in line for line in lines)  # one line per side, each cited
    assert [re.findall(r"\[(\d+)\]", line) for line in lines] == [["1"], ["2"]]  # one quote and marker per side
    assert len({c["quote"] for c in doc["citations"]}) == len(doc["citations"]) == 2
    assert lines[0].startswith("- 向量检索" if lang == "zh" else "- BM25")
    _check_citations(snap, doc)


@pytest.mark.slow
@pytest.mark.parametrize(
    "question,expected",
    [("快照默认保留多少个版本？", "zh"), ("What is the default maximum file size for a source file?", "en")],
)
def test_fact_answers_are_few_distinct_citations_in_the_question_language(served_snapshot, chat, question, expected):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert 1 <= len(doc["citations"]) <= 2
    assert len({c["quote"] for c in doc["citations"]}) == len(doc["citations"])
    from petrichor_core.text.lang import language_of

    assert language_of(doc["citations"][0]["quote"]) == expected
    _check_citations(snap, doc)


@pytest.mark.slow
@pytest.mark.parametrize(
    "question,marker",
    [("What is the capital of Mongolia?", "Nothing read mentions"), ("蒙古的首都是哪里？", "没有读到")],
)
def test_unanswerable_questions_say_what_is_missing(served_snapshot, chat, question, marker):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert doc["citations"] == [] and doc["stop_reason"] == "nothing_found"
    assert marker in doc["answer"]


def test_a_sentence_ending_in_a_colon_is_quoted_with_the_command_block_it_introduces(served_snapshot, chat):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, "How do I roll back to an older snapshot?", Scope(), chat=chat, embedder=embedder)
    quote = next(c["quote"] for c in doc["citations"] if c["quote"].startswith("To serve an older snapshot, write its version into `CURRENT`:"))
    assert quote.endswith("mv data/snapshots/CURRENT.tmp data/snapshots/CURRENT\n```")
    assert quote in doc["answer"]
    _check_citations(snap, doc)
