"""Follow-up questions on the bundled corpus: the previous turn's subject and evidence inform retrieval.

Asked alone, "How do I change that?" / "怎么改？" name nothing and are answered about something else (a
corpus file to edit); after a question about how many snapshots are kept they are answered with the
variable that sets it, read from the passage the previous answer quoted. "What is its default constant?"
/ "它的常数默认是多少？" after a turn about reciprocal rank fusion answer with its constant, 60. A question
that names its own subject is searched as asked, and without history nothing changes. Both HTTP chat
endpoints and `/v1` hand the conversation to the agent the same way, and the model path seeds its search
with the resolved question.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petrichor_core.config import ModelEndpoint, load_settings
from petrichor_core.models.chat import OpenAIChatModel
from petrichor_core.models.providers import make_answer_model
from petrichor_serving.agent import followup, loop
from petrichor_serving.recall.access import Scope
from tests.models.fake_openai import CHAT, FakeOpenAI, chat_reply

pytestmark = pytest.mark.slow  # builds the bundled corpus

SETTING = "PETRICHOR_KEEP_SNAPSHOTS"
CHANGE = [
    ("How many snapshots are kept by default?", "How do I change that?"),
    ("默认保留多少个快照？", "怎么改？"),
]
ANSWERED = {
    CHANGE[0][0]: (
        "5 — ",
        "Garbage collection runs after each publish and keeps the newest 5 snapshots; [1] How many old snapshots are kept is set with `PETRICHOR_KEEP_SNAPSHOTS`, described in Operating the pipeline with Dagster.",
    ),
    CHANGE[1][0]: ("5 个——", "默认保留最新的 5 个快照版本，可以通过 `PETRICHOR_KEEP_SNAPSHOTS` 修改。"),
}
"""The service's answers to the first questions, as a client sends them back: a short answer, the quote, its marker."""
CONSTANT = [
    ("What is reciprocal rank fusion?", "What is its default constant?", "The default RRF constant is 60"),
    ("倒数排名融合是什么？", "它的常数默认是多少？", "RRF 常数 k 默认为 60"),
]


@pytest.fixture(scope="module")
def chat():
    return make_answer_model(load_settings())


def _ask(served, chat, question: str, history=()) -> dict:
    snap, embedder = served
    return loop.answer(snap, question, Scope(), chat=chat, embedder=embedder, history=list(history))


def _history(served, chat, first: str) -> list[dict[str, str]]:
    """The first turn and its answer: the answer given now, or for a settings question the answer the
    service gives it, so the follow-up is tested whatever the first turn's gate decides."""
    if first in ANSWERED:
        lead, quote = ANSWERED[first]
        assert all(any(q in c.get("content", "") for c in served[0].chunks.values()) for q in quote.split(" [1] "))
        return [{"role": "user", "content": first}, {"role": "assistant", "content": f"{lead}{quote} [1]"}]
    previous = _ask(served, chat, first)
    assert previous["citations"]
    return [{"role": "user", "content": first}, {"role": "assistant", "content": previous["answer"]}]


@pytest.mark.parametrize("first,follow", CHANGE, ids=["en", "zh"])
def test_how_do_i_change_that_is_answered_with_the_setting_asked_about(served_snapshot, chat, first, follow):
    alone = _ask(served_snapshot, chat, follow)
    assert SETTING not in alone["answer"]  # asked alone, it is about something else
    doc = _ask(served_snapshot, chat, follow, _history(served_snapshot, chat, first))
    assert SETTING in doc["answer"] and any(SETTING in c["quote"] for c in doc["citations"])
    assert any(n.startswith("follow-up (") for n in doc["trace"]["notes"])


@pytest.mark.parametrize("first,follow,fusion", CONSTANT, ids=["en", "zh"])
def test_a_follow_up_is_answered_about_the_previous_turns_subject(served_snapshot, chat, first, follow, fusion):
    alone = _ask(served_snapshot, chat, follow)
    assert not any(fusion in c["quote"] for c in alone["citations"])
    doc = _ask(served_snapshot, chat, follow, _history(served_snapshot, chat, first))
    assert "60" in doc["answer"]
    assert any(c["quote"].startswith(fusion) for c in doc["citations"])
    assert any(n.startswith("follow-up (anaphor") for n in doc["trace"]["notes"])


def test_a_question_missing_its_subject_takes_it_from_the_previous_turn(served_snapshot, chat):
    doc = _ask(served_snapshot, chat, "默认常数是多少？", _history(served_snapshot, chat, "倒数排名融合是什么？"))
    assert any(c["quote"].startswith("RRF 常数 k 默认为 60") for c in doc["citations"])
    assert any(n.startswith("follow-up (no named subject)") for n in doc["trace"]["notes"])


def test_the_previous_answers_passage_is_read_first(served_snapshot, chat):
    snap, _ = served_snapshot
    history = _history(served_snapshot, chat, CHANGE[1][0])
    found = followup.resolve(snap, Scope(), CHANGE[1][1], history)
    assert found is not None and found.prefer
    assert SETTING in snap.chunks[found.prefer[0]]["content"]  # the passage quoted, found again past "5 个——"
    assert "快照" in found.terms and found.query.startswith(CHANGE[1][1])


def test_a_question_that_stands_alone_is_searched_as_asked(served_snapshot, chat):
    snap, _ = served_snapshot
    history = _history(served_snapshot, chat, "What is reciprocal rank fusion?")
    second = "How many snapshots are kept by default?"
    assert followup.resolve(snap, Scope(), second, history) is None
    assert _ask(served_snapshot, chat, second, history)["answer"] == _ask(served_snapshot, chat, second)["answer"]
    assert followup.resolve(snap, Scope(), "What is its default constant?", []) is None


def test_a_follow_up_replaces_the_constraint_it_names_and_keeps_the_others(served_snapshot):
    snap, _ = served_snapshot
    history = [{"role": "user", "content": "How many snapshots did Petrichor keep in 2020?"}, {"role": "assistant", "content": "Not found."}]
    found = followup.resolve(snap, Scope(), "What about 2021?", history)
    assert found is not None and found.reason == "elliptical"
    assert "2020" not in found.terms and "Petrichor" in found.terms and "snapshots" in found.terms


def test_a_chain_of_follow_ups_keeps_the_first_subject(served_snapshot, chat):
    snap, _ = served_snapshot
    history = _history(served_snapshot, chat, "倒数排名融合是什么？")
    second = _ask(served_snapshot, chat, "它的常数默认是多少？", history)
    history += [{"role": "user", "content": "它的常数默认是多少？"}, {"role": "assistant", "content": second["answer"]}]
    found = followup.resolve(snap, Scope(), "为什么是这个值？", history)
    assert found is not None and {"融合", "常数"} <= set(found.terms)


_TYPED = st.lists(
    st.sampled_from("how do I change that it its what about 2021 default key snapshot 它 这个 怎么 改 快照 默认 呢".split()), min_size=1, max_size=6
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=_TYPED)
def test_a_resolved_question_keeps_every_word_the_user_typed(served_snapshot, words):
    snap, _ = served_snapshot
    question = " ".join(words) + "?"
    history = [
        {"role": "user", "content": "How many snapshots are kept by default?"},
        {"role": "assistant", "content": "5 — Garbage collection keeps the newest 5 snapshots. [1]"},
    ]
    found = followup.resolve(snap, Scope(), question, history)
    assert followup.resolve(snap, Scope(), question, []) is None
    if found is not None:
        assert found.query.startswith(question.strip())
        assert all(t.casefold() not in question.casefold() for t in found.terms)


def test_the_model_path_searches_with_the_resolved_question_and_reads_the_previous_passage_first(served_snapshot, chat):
    snap, embedder = served_snapshot
    history = _history(served_snapshot, chat, CHANGE[0][0])
    resolved = followup.resolve(snap, Scope(), CHANGE[0][1], history)
    assert resolved is not None and resolved.prefer
    quote = next(line for line in snap.chunks[resolved.prefer[0]]["content"].splitlines() if SETTING in line)
    server = FakeOpenAI().start()
    try:
        server.script(CHAT, chat_reply(json.dumps({"answer": f"{quote} [1]", "citations": [{"marker": 1, "evidence_id": "e1", "quote": quote}]})))
        model = OpenAIChatModel(
            ModelEndpoint(base_url=server.base_url, model="test-model", api_key="k", timeout_s=5, max_retries=0), backoff_base_s=0.01
        )
        doc = loop.answer(snap, CHANGE[0][1], Scope(), chat=model, embedder=embedder, history=history)
        sent = server.calls(CHAT)
    finally:
        server.stop()
    steps = doc["trace"]["steps"]
    assert steps[0]["tool"] == "search" and steps[0]["arguments"]["query"] == resolved.query
    assert steps[1]["arguments"]["targets"][0] == {"chunk_id": resolved.prefer[0]}
    assert SETTING in doc["answer"] and doc["citations"][0]["chunk_id"] == resolved.prefer[0]
    assert [m["role"] for m in sent[0]["messages"][1:3]] == ["user", "assistant"]  # the model sees the conversation too


def test_both_chat_endpoints_and_v1_pass_the_conversation_to_the_agent(keyed):
    headers = {"Authorization": "Bearer globex-key"}
    first, follow = CHANGE[0]
    lead, quote = ANSWERED[first]
    history = [{"role": "user", "content": first}, {"role": "assistant", "content": f"{lead}{quote} [1]"}]
    res = keyed.post("/api/assistant/chat", json={"question": follow, "history": history}, headers=headers)
    assert res.status_code == 200, res.text
    assert SETTING in res.json()["answer"]
    messages = [{"role": "system", "content": "You are helpful."}, *history, {"role": "user", "content": [{"type": "text", "text": follow}]}]
    res = keyed.post("/v1/chat/completions", json={"model": "petrichor", "messages": messages}, headers=headers)
    assert res.status_code == 200, res.text
    message = res.json()["choices"][0]["message"]
    assert SETTING in message["content"] and any(SETTING in c["quote"] for c in message["citations"])


def test_a_large_scope_finds_the_previous_passage_through_the_search(served_snapshot, chat, monkeypatch):
    snap, _ = served_snapshot
    answer = _history(served_snapshot, chat, CHANGE[1][0])[1]["content"]
    scanned = followup.quoted_chunks(snap, Scope(), answer)
    monkeypatch.setattr(followup, "SCAN_LIMIT", 0)
    assert scanned and followup.quoted_chunks(snap, Scope(), answer) == scanned
