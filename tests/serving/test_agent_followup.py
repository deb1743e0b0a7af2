"""Follow-up questions on the bundled corpus: the previous turn's subject and evidence inform retrieval.

Asked alone, "What is its default constant?" / "它的常数默认是多少？" name no subject and get an answer about
some other default; after a turn about reciprocal rank fusion they answer with its constant, 60, cited at
the fusion passage. Both HTTP chat endpoints hand the conversation to the agent the same way.
"""

from __future__ import annotations

import pytest

from petrichor_pipeline.config import load_settings
from petrichor_pipeline.models.providers import make_answer_model
from petrichor_serving.agent import followup, loop
from petrichor_serving.recall.access import Scope

pytestmark = pytest.mark.slow  # builds the bundled corpus

CASES = [
    ("What is reciprocal rank fusion?", "What is its default constant?", "The default RRF constant is 60"),
    ("倒数排名融合是什么？", "它的常数默认是多少？", "RRF 常数 k 默认为 60"),
]


@pytest.fixture(scope="module")
def chat():
    return make_answer_model(load_settings())


def _history(snap, embedder, chat, first: str) -> list[dict[str, str]]:
    previous = loop.answer(snap, first, Scope(), chat=chat, embedder=embedder)
    assert previous["citations"]
    return [{"role": "user", "content": first}, {"role": "assistant", "content": previous["answer"]}]


@pytest.mark.parametrize("first,follow,fusion", CASES, ids=["en", "zh"])
def test_a_follow_up_is_answered_about_the_previous_turns_subject(served_snapshot, chat, first, follow, fusion):
    snap, embedder = served_snapshot
    alone = loop.answer(snap, follow, Scope(), chat=chat, embedder=embedder)
    assert not any(fusion in c["quote"] for c in alone["citations"])  # asked alone, it is about something else
    doc = loop.answer(snap, follow, Scope(), chat=chat, embedder=embedder, history=_history(snap, embedder, chat, first))
    assert "60" in doc["answer"]
    assert any(c["quote"].startswith(fusion) for c in doc["citations"])
    assert any(n.startswith("follow-up (anaphor)") for n in doc["trace"]["notes"])


def test_a_question_missing_its_subject_takes_it_from_the_previous_turn(served_snapshot, chat):
    snap, embedder = served_snapshot
    history = _history(snap, embedder, chat, "倒数排名融合是什么？")
    doc = loop.answer(snap, "默认常数是多少？", Scope(), chat=chat, embedder=embedder, history=history)
    assert any(c["quote"].startswith("RRF 常数 k 默认为 60") for c in doc["citations"])
    assert any(n.startswith("follow-up (no named subject)") for n in doc["trace"]["notes"])


def test_a_question_that_stands_alone_is_searched_as_asked(served_snapshot):
    snap, _ = served_snapshot
    history = [{"role": "user", "content": "What is reciprocal rank fusion?"}, {"role": "assistant", "content": "It merges ranked lists."}]
    assert followup.resolve(snap, Scope(), "How many snapshots are kept by default?", history) is None
    assert followup.resolve(snap, Scope(), "What is its default constant?", []) is None
    found = followup.resolve(snap, Scope(), "What is its default constant?", history)
    assert found is not None and found.terms == ("reciprocal", "rank", "fusion") and found.prefer == ()


def test_both_chat_endpoints_pass_the_conversation_to_the_agent(keyed):
    headers = {"Authorization": "Bearer globex-key"}
    first, follow, fusion = CASES[0]
    previous = keyed.post("/api/assistant/chat", json={"question": first}, headers=headers).json()
    history = [{"role": "user", "content": first}, {"role": "assistant", "content": previous["answer"]}]
    res = keyed.post("/api/assistant/chat", json={"question": follow, "history": history}, headers=headers)
    assert res.status_code == 200, res.text
    assert any(c["quote"].startswith(fusion) for c in res.json()["citations"])
    res = keyed.post("/v1/chat/completions", json={"model": "petrichor", "messages": [*history, {"role": "user", "content": follow}]}, headers=headers)
    assert res.status_code == 200, res.text
    message = res.json()["choices"][0]["message"]
    assert "60" in message["content"] and any(c["quote"].startswith(fusion) for c in message["citations"])
