"""The offline answering loop on the bundled corpus: facts quoted exactly, structure from the outline."""

from __future__ import annotations

import pytest

from petrichor_pipeline.config import load_settings
from petrichor_pipeline.models.providers import make_chat_model
from petrichor_serving.agent import loop
from petrichor_serving.recall.access import Scope


@pytest.fixture(scope="module")
def chat():
    return make_chat_model(load_settings())


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
