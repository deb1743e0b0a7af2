"""What the question pins down, checked on the bundled corpus: a configured model's answer whose cited units
miss the asked year is not given (the trace names the year in the user's words), on both languages, through an
OpenAI-compatible server on 127.0.0.1; the offline not-found text names what was searched in the user's words."""

from __future__ import annotations

import pytest

from petrichor_core.text.lang import NOT_FOUND
from petrichor_serving.agent import loop, tools
from petrichor_serving.answer.answerer import OFFLINE
from petrichor_serving.recall.access import Scope
from tests.serving.test_model_agent import _run, _sentence, final

pytestmark = pytest.mark.slow  # builds the bundled corpus


@pytest.mark.parametrize(
    "question,year,lang",
    [
        ("How many snapshots did garbage collection keep by default in 2019?", "2019", "en"),
        ("2019年快照默认保留几个版本？", "2019年", "zh"),
    ],
)
def test_a_models_answer_citing_units_without_the_asked_year_is_not_given(served_snapshot, question, year, lang):
    snap, embedder = served_snapshot
    seeded = next(c["chunk_id"] for c in tools.search(snap, Scope(), question, embedder=embedder, limit=6)["candidates"] if c.get("chunk_id"))
    doc, _ = _run(snap, embedder, final("5 [1]", ("e1", _sentence(snap, seeded))), question=question)
    assert doc["answer"].startswith(NOT_FOUND[lang]) and doc["citations"] == []
    verdict = doc["trace"]["answerability"]
    assert verdict["answerable"] is False and verdict["signals"]["constraints"] >= 1
    assert f"the question names {year}; the cited evidence does not" in verdict["reason"]
    note = next(n for n in doc["trace"]["notes"] if n.startswith("answerability: the model's answer is not given"))
    assert year in note
    assert year in doc["answer"]  # the not-found text names the year as the user wrote it


@pytest.mark.parametrize(
    "question,surface,stem",
    [
        ("Which series of quantum processors considers entanglement?", "series", "seri"),
        ("Which mercury thermometers are considered?", "considered", "consider"),
    ],
)
def test_the_not_found_text_names_the_user_s_words_not_their_stems(served_snapshot, question, surface, stem):
    snap, embedder = served_snapshot
    doc = loop.answer(snap, question, Scope(), chat=OFFLINE, embedder=embedder)
    assert doc["answer"].startswith(NOT_FOUND["en"]) and doc["citations"] == []
    tail = doc["answer"][len(NOT_FOUND["en"]) :]
    words = {w.strip(" .,") for w in tail.replace("Nothing read mentions:", "").split()}
    assert stem not in words
