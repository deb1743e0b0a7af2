"""The short answer first, on the bundled corpus: the asked number opens the answer, in both languages, and a
definition question says what the term is."""

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


@pytest.mark.parametrize("question", ["How many snapshots are kept by default?", "快照默认保留多少个版本？"])
def test_a_count_question_opens_with_the_number(served_snapshot, chat, question):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert doc["answer"].startswith("5")
    first = doc["citations"][0]["quote"]  # the quote the number was read from comes first
    assert "5 snapshots" in first or "5 个快照" in first


def test_a_definition_question_says_what_the_term_is(served_snapshot, chat):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, "What is RRF and why is it used?", Scope(), chat=chat, embedder=embedder)
    assert doc["answer"].startswith("RRF: reciprocal rank fusion")
    assert doc["citations"]
