"""The answerability gate on the bundled corpus: questions it does not answer get the not-found text with no
citation and the trace says which signal fell short; its ordinary questions still answer, cited."""

from __future__ import annotations

import pytest

from petrichor_core.config import load_settings
from petrichor_core.models.providers import make_answer_model
from petrichor_core.text.lang import NOT_FOUND
from petrichor_serving.agent import loop
from petrichor_serving.recall.access import Scope

pytestmark = pytest.mark.slow  # builds the bundled corpus


@pytest.fixture(scope="module")
def chat():
    return make_answer_model(load_settings())


@pytest.mark.parametrize(
    "question,lang",
    [("企业版每月收费多少钱？", "zh"), ("What is mercury?", "en")],
)
def test_questions_the_corpus_does_not_answer_get_not_found(served_snapshot, chat, question, lang):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert doc["answer"].startswith(NOT_FOUND[lang]) and doc["citations"] == []
    assert doc["stop_reason"] == "nothing_found"
    verdict = doc["trace"]["answerability"]
    if verdict is not None:  # something was quoted and then withheld: the trace says why
        assert not verdict["answerable"] and verdict["signal"] and verdict["threshold"] is not None
        assert verdict["withheld"]["citations"]
        assert any(note.startswith("answerability: not answered") for note in doc["trace"]["notes"])


@pytest.mark.parametrize(
    "question",
    [
        "What happens to the serving snapshot when a build fails?",
        "How many snapshots are kept by default?",
        "快照默认保留多少个版本？",
        "What is the default RRF constant?",
        "How do I roll back to an older snapshot?",
    ],
)
def test_ordinary_questions_still_answer_with_citations(served_snapshot, chat, question):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert doc["citations"] and doc["stop_reason"] == "answered"
    assert doc["trace"]["answerability"]["answerable"] is True


def test_a_question_about_another_product_is_refused_naming_the_words_the_knowledge_base_never_uses(served_snapshot, chat):
    """Another product's configuration question shares the genre and the common words with any manual, and
    passes the closeness thresholds; half its words are ones the knowledge base has never written."""
    snap, embedder = served_snapshot
    question = "What kind of plugins is preinstalled with Red Hat Developer Hub and how do I turn them off?"
    doc = loop.answer(snap, question, Scope(), chat=chat, embedder=embedder)
    assert doc["answer"].startswith(NOT_FOUND["en"]) and doc["citations"] == []
    verdict = doc["trace"]["answerability"]
    assert verdict["signal"] == "unknown_share"
    assert {"Red", "Hat"} <= set(verdict["signals"]["unknown_words"])
    assert "the knowledge base never mentions" in verdict["reason"]
