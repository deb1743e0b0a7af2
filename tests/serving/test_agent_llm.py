"""The answering loop with a chat endpoint: citations are checked against what was read.

A real OpenAI-compatible server on 127.0.0.1 plays the model. Its reply cites one verbatim sentence of
the first evidence passage and one invented quote; only the verbatim one survives, mapped to offsets
in the article version.
"""

from __future__ import annotations

import json

import pytest

from petrichor_core.config import ModelEndpoint
from petrichor_core.models.chat import OpenAIChatModel
from petrichor_serving.agent import loop, tools
from petrichor_serving.recall.access import Scope
from tests.models.fake_openai import CHAT, FakeOpenAI, chat_reply, error_reply

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess

QUESTION = "What does the key file store instead of the API keys themselves?"


def _model(server: FakeOpenAI) -> OpenAIChatModel:
    return OpenAIChatModel(ModelEndpoint(base_url=server.base_url, model="test-model", api_key="k", timeout_s=5, max_retries=1), backoff_base_s=0.01)


def test_only_verbatim_quotes_of_read_evidence_become_citations(served_snapshot):
    snap, embedder = served_snapshot
    first = tools.search(snap, Scope(), QUESTION, embedder=embedder, limit=6)["candidates"]
    chunk = snap.chunks[next(c["chunk_id"] for c in first if c.get("chunk_id"))]
    sentence = next(line.strip() for line in chunk["content"].split("\n") if len(line.strip()) > 30 and not line.startswith(("#", "|", "`")))
    reply = {
        "answer": "It stores hashes [1]. It also stores the moon [2].",
        "citations": [
            {"marker": 1, "evidence_id": "e1", "quote": sentence},
            {"marker": 2, "evidence_id": "e2", "quote": "a sentence that appears in no passage"},
        ],
    }
    server = FakeOpenAI().start()
    try:
        server.script(CHAT, chat_reply(json.dumps(reply)))
        doc = loop.answer(snap, QUESTION, Scope(), chat=_model(server), embedder=embedder)
        sent = server.calls(CHAT)[0]
    finally:
        server.stop()

    assert [c["marker"] for c in doc["citations"]] == [1]
    cite = doc["citations"][0]
    assert cite["chunk_id"] == chunk["chunk_id"] and cite["quote"] == sentence
    article = snap.articles[cite["article_id"]]
    assert article["content"][cite["quote_start"] : cite["quote_end"]] == sentence
    assert "[2]" not in doc["answer"] and "[1]" in doc["answer"]
    prompt = json.dumps(sent, ensure_ascii=False)
    assert sentence.replace('"', '\\"')[:40] in prompt  # the model was shown the passage it quoted


def test_a_failing_endpoint_falls_back_to_the_offline_answer(served_snapshot):
    snap, embedder = served_snapshot
    server = FakeOpenAI().start()
    try:
        server.script(CHAT, error_reply(500), error_reply(500))
        doc = loop.answer(snap, QUESTION, Scope(), chat=_model(server), embedder=embedder)
    finally:
        server.stop()
    assert doc["stop_reason"] == "model_error_fallback"
    assert doc["citations"] and all(c["quote"] in doc["answer"] for c in doc["citations"])
    assert any(step["tool"] == "answer" and step.get("error") for step in doc["trace"]["steps"])
