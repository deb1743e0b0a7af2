"""A chat model's "not found" against the offline answer, with a scripted OpenAI-compatible server on 127.0.0.1.

The model reads the seeded evidence and replies that it does not answer. On a near miss — the bundled docs
talk about the subject but not the asked version or year — the offline quote clears the answerability gate
only narrowly, and the model's verdict is kept; where the offline evidence clears the gate by
`OVERRULE_MARGIN` the offline answer is given. The trace says which, with the scores. `/v1` and
`/api/assistant/chat` answer through the same path.
"""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from petrichor_core.text.lang import NOT_FOUND
from petrichor_serving.agent import answerability, tools
from petrichor_serving.app import create_app
from petrichor_serving.recall.access import Scope
from petrichor_serving.services import Services, ServingSettings
from petrichor_serving.snapshot import SnapshotStore
from tests.models.fake_openai import CHAT, FakeOpenAI, chat_reply
from tests.serving.test_model_agent import _model, _run, _sentence, final

pytestmark = pytest.mark.slow  # builds the bundled corpus

NOT_FOUND_REPLY = json.dumps({"answer": "not found", "citations": []})
NEAR_MISSES = [
    ("What was the default RRF constant in version 1?", "en"),
    ("Petrichor 2019年发布了哪个版本？", "zh"),
]
"""The docs give today's RRF constant and say nothing of a version 1 or of 2019: the offline quote is on the
subject and clears the gate, but not by the margin."""
UNANSWERED = "企业版每年收费多少？"
"""The docs name no edition and no fee: the offline gate refuses the quote (no content word held)."""
ANSWERED = [
    "What does the key file store instead of the API keys themselves?",
    "What happens to the serving snapshot when a build fails?",
]


def _decision(doc: dict) -> dict:
    return doc["trace"]["answerability"]["model_not_found"]


@pytest.mark.parametrize("question,lang", NEAR_MISSES)
def test_on_a_near_miss_the_models_not_found_is_kept(served_snapshot, question, lang):
    snap, embedder = served_snapshot
    doc, sent = _run(snap, embedder, chat_reply(NOT_FOUND_REPLY), question=question)
    assert len(sent) == 1
    assert doc["answer"].startswith(NOT_FOUND[lang]) and doc["citations"] == []
    assert doc["stop_reason"] == "nothing_found"
    verdict = doc["trace"]["answerability"]
    assert verdict["answerable"] is True  # the gate alone lets the offline quote through: a narrow pass
    decision = _decision(doc)
    assert decision["decision"] == "kept" and decision["overrule_margin"] == answerability.OVERRULE_MARGIN
    assert not decision["clear"]["answerable"] and decision["clear"]["signal"] in ("semantic", "margin", "coverage", "held_share")
    assert decision["clear"]["value"] < decision["clear"]["threshold"]
    assert verdict["withheld"]["citations"]  # the offline quote set aside, for the trace only
    note = next(n for n in doc["trace"]["notes"] if "the model found no answer" in n)
    assert "the model's not-found kept" in note and f"semantic {verdict['signals']['semantic']}" in note


@pytest.mark.parametrize("question", ANSWERED)
def test_evidence_that_clears_the_gate_by_the_margin_overrules_the_models_not_found(served_snapshot, question):
    snap, embedder = served_snapshot
    doc, _ = _run(snap, embedder, chat_reply(NOT_FOUND_REPLY), question=question)
    assert doc["stop_reason"] == "offline_fallback"
    assert doc["citations"] and "[1]" in doc["answer"]
    assert not doc["answer"].startswith(NOT_FOUND["en"])
    decision = _decision(doc)
    assert decision["decision"] == "overruled" and decision["clear"]["answerable"] is True
    signals = doc["trace"]["answerability"]["signals"]
    model = signals["embedder"].split(":", 1)[0]
    assert signals["semantic"] >= answerability.SEMANTIC_MIN[model] + answerability.OVERRULE_MARGIN
    assert signals["margin"] >= answerability.MARGIN_MIN[model][signals["script"]] + answerability.OVERRULE_MARGIN
    assert signals["weighted_coverage"] >= answerability.MARGIN_WAIVED_AT + answerability.OVERRULE_MARGIN
    note = next(n for n in doc["trace"]["notes"] if "the model found no answer" in n)
    assert "the model's not-found overruled" in note and f"margin {signals['margin']}" in note


def test_where_the_offline_quote_fails_the_gate_the_not_found_is_kept_and_said_so(served_snapshot):
    """As before, a model's not-found on a question the offline gate refuses stays not found; the trace now
    names the decision and the signal that fell short."""
    snap, embedder = served_snapshot
    doc, _ = _run(snap, embedder, chat_reply(NOT_FOUND_REPLY), question=UNANSWERED)
    assert doc["answer"].startswith(NOT_FOUND["zh"]) and doc["citations"] == []
    verdict = doc["trace"]["answerability"]
    assert verdict["answerable"] is False and _decision(doc)["decision"] == "kept"
    note = next(n for n in doc["trace"]["notes"] if "the model found no answer" in n)
    assert verdict["reason"] in note


def test_a_models_cited_answer_passes_the_same_gate(served_snapshot):
    """The model's own answer, its quote verbatim in the evidence read, is held to the offline gate: citing a
    passage that names nothing the question asks about, it is not given."""
    snap, embedder = served_snapshot
    question = UNANSWERED
    seeded = next(c["chunk_id"] for c in tools.search(snap, Scope(), question, embedder=embedder, limit=6)["candidates"] if c.get("chunk_id"))
    doc, _ = _run(snap, embedder, final("两个 [1]。", ("e1", _sentence(snap, seeded))), question=question)
    assert doc["answer"].startswith(NOT_FOUND["zh"]) and doc["citations"] == []
    assert doc["trace"]["answerability"]["answerable"] is False
    assert any(n.startswith("answerability: the model's answer is not given") for n in doc["trace"]["notes"])


def test_both_chat_endpoints_keep_the_models_not_found_on_a_near_miss(served_snapshot, built_corpus):
    snap, embedder = served_snapshot
    question, lang = NEAR_MISSES[0]
    server = FakeOpenAI().start()
    try:
        server.script(CHAT, chat_reply(NOT_FOUND_REPLY), chat_reply(NOT_FOUND_REPLY))
        store = SnapshotStore(built_corpus.data_dir, embed_fingerprint=embedder.fingerprint)
        assert store.refresh()
        services = Services(settings=ServingSettings(data_dir=built_corpus.data_dir), store=store, keys=None, chat=_model(server), embedder=embedder)
        with TestClient(create_app(services, watch=False)) as client:
            chat = client.post("/api/assistant/chat", json={"question": question})
            v1 = client.post("/v1/chat/completions", json={"model": "petrichor", "messages": [{"role": "user", "content": question}]})
            assert chat.status_code == 200 and v1.status_code == 200, (chat.text, v1.text)
            assert chat.json()["answer"].startswith(NOT_FOUND[lang]) and chat.json()["citations"] == []
            assert v1.json()["choices"][0]["message"]["content"].startswith(NOT_FOUND[lang])
            for trace_id in (chat.json()["trace_id"], v1.json()["petrichor"]["trace_id"]):
                trace = client.get(f"/api/traces/{trace_id}").json()
                assert trace["answerability"]["model_not_found"]["decision"] == "kept"
        assert len(server.calls(CHAT)) == 2
    finally:
        server.stop()
