"""Comparisons on the bundled corpus: one statement per side on the same attribute, each cited, one line per side."""

from __future__ import annotations

import pytest

from petrichor_core.config import load_settings
from petrichor_core.models.providers import make_answer_model
from petrichor_serving.agent import loop
from petrichor_serving.recall.access import Scope

pytestmark = pytest.mark.slow  # builds the bundled corpus


@pytest.fixture(scope="module")
def chat():
    return make_answer_model(load_settings())


@pytest.mark.parametrize(
    "question,items,separator",
    [
        ("What is the difference between chunk_vector and chunk_bm25?", ("chunk_vector", "chunk_bm25"), ": "),
        ("chunk_vector 和 chunk_bm25 有什么区别？", ("chunk_vector", "chunk_bm25"), "："),
        ("How does single-user local mode differ from keyed mode?", ("single-user local mode", "keyed mode"), ": "),
    ],
    ids=["routes-en", "routes-zh", "modes-en"],
)
def test_each_side_states_the_same_attribute_cited_in_one_line(served_snapshot, chat, question, items, separator):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert doc["trace"]["question_class"] == "comparison" and doc["stop_reason"] == "answered"
    lines = doc["answer"].split("\n")
    assert [line.split(separator, 1)[0] for line in lines] == [f"- {item}" for item in items]
    assert [line.endswith(f"[{n}]") for n, line in enumerate(lines, 1)] == [True, True]
    quotes = [c["quote"] for c in doc["citations"]]
    assert len(quotes) == 2 and all(item.lower() in quote.lower() for item, quote in zip(items, quotes))
    # the same attribute: two rows of one table, under the same column labels
    assert len({c["article_id"] for c in doc["citations"]}) == 1 and all(q.count("|") == 2 for q in quotes)
    labels = [[part.split(": ")[0] for part in line.split(separator, 1)[1].split("; ")[:3]] for line in lines]
    assert labels[0] == labels[1]
