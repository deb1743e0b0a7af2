"""The model agent against a scripted OpenAI-compatible server on 127.0.0.1.

The scripted model issues tool calls — an unknown tool, invalid JSON arguments, a repeated call, a read
outside its tenant — cites text it never read, and in one script never stops. The server runs every
call in the caller's scope and budget; only quotes of read evidence survive.
"""

from __future__ import annotations

import json

import pytest

from petrichor_core.config import ModelEndpoint
from petrichor_core.models.chat import OpenAIChatModel
from petrichor_serving.agent import loop, tools
from petrichor_serving.agent.model_agent import TOOL_NAMES
from petrichor_serving.answer.answerer import OfflineAnswerer
from petrichor_serving.recall.access import Scope
from tests.models.fake_openai import CHAT, FakeOpenAI, Reply, chat_reply, error_reply

pytestmark = pytest.mark.slow
QUESTION = "What does the key file store instead of the API keys themselves?"


def tool_calls(*calls: tuple[str, str]) -> Reply:
    """A reply whose message asks for tool calls: (name, raw arguments string) each."""
    body = {
        "id": "chatcmpl-tools",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}} for i, (name, args) in enumerate(calls)
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return Reply(body=body)


def final(answer: str, *citations: tuple[str, str]) -> Reply:
    return chat_reply(
        json.dumps({"answer": answer, "citations": [{"marker": i, "evidence_id": e, "quote": q} for i, (e, q) in enumerate(citations, 1)]})
    )


def _model(server: FakeOpenAI) -> OpenAIChatModel:
    return OpenAIChatModel(ModelEndpoint(base_url=server.base_url, model="test-model", api_key="k", timeout_s=5, max_retries=0), backoff_base_s=0.01)


def _sentence(snap, chunk_id: str) -> str:
    content = snap.chunks[chunk_id]["content"]
    return next(line.strip() for line in content.split("\n") if len(line.strip()) > 30 and not line.lstrip().startswith(("#", "|", "`", "-", ">")))


def _run(snap, embedder, *replies: Reply, question: str = QUESTION, scope: Scope | None = None):
    server = FakeOpenAI().start()
    try:
        server.script(CHAT, *replies)
        doc = loop.answer(snap, question, scope or Scope(), chat=_model(server), embedder=embedder)
        return doc, server.calls(CHAT)
    finally:
        server.stop()


def test_tool_calls_are_run_server_side_and_bad_calls_are_answered_with_errors(served_snapshot):
    snap, embedder = served_snapshot
    hit = next(c for c in tools.search(snap, Scope(), QUESTION, embedder=embedder, limit=6)["candidates"] if c.get("chunk_id"))
    sentence = _sentence(snap, hit["chunk_id"])
    read = json.dumps({"chunk_id": hit["chunk_id"]})
    doc, sent = _run(
        snap,
        embedder,
        tool_calls(("delete_everything", "{}"), ("knowledge_search", "{query: oops"), ("knowledge_search", json.dumps({"query": "key file hashes"}))),
        tool_calls(("knowledge_read", read)),
        tool_calls(("knowledge_read", read)),
        final("It stores hashes [1]. And the moon [2].", ("e1", sentence), ("e2", "the moon is made of cheese")),
    )
    assert doc["stop_reason"] == "answered"
    assert [c["quote"] for c in doc["citations"]] == [sentence] and "[2]" not in doc["answer"]
    assert doc["trace"]["dropped_citations"][0]["quote"] == "the moon is made of cheese"
    errors = [s.get("error") for s in doc["trace"]["steps"]]
    assert "unknown tool" in errors and "invalid JSON arguments" in errors and "repeated call" in errors
    tool_messages = [m for m in sent[1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 3 and all(m["content"].startswith("<data>") for m in tool_messages)
    assert "unknown tool" in tool_messages[0]["content"] and "not valid JSON" in tool_messages[1]["content"]
    assert {t["function"]["name"] for t in sent[0]["tools"]} == TOOL_NAMES
    assert "repeated call" in [m for m in sent[3]["messages"] if m["role"] == "tool"][-1]["content"]


def test_a_citation_of_text_never_read_is_dropped_then_the_offline_answer_is_returned(served_snapshot):
    snap, embedder = served_snapshot
    first = loop.answer(snap, QUESTION, Scope(), chat=OfflineAnswerer(), embedder=embedder)
    read_articles = {e["article_id"] for e in first["evidence"]}
    unread = next(cid for cid, c in snap.chunks.items() if c["article_id"] not in read_articles and len(c["content"]) > 200)
    never_read = _sentence(snap, unread)
    doc, sent = _run(snap, embedder, final("Claim [1].", ("e1", never_read)), final("Claim again [1].", ("e2", never_read)))
    assert len(sent) == 2 and "evidence ids are: e1" in sent[1]["messages"][-1]["content"]  # one retry, ids restated
    assert doc["stop_reason"] == "offline_fallback"
    assert doc["citations"] and never_read not in [c["quote"] for c in doc["citations"]]
    assert all(c["article_id"] in read_articles for c in doc["citations"])
    assert any(d["quote"] == never_read[:300] for d in doc["trace"]["dropped_citations"])


def test_a_model_that_never_stops_is_ended_by_the_budget(served_snapshot):
    snap, embedder = served_snapshot
    endless = [tool_calls(("knowledge_search", json.dumps({"query": f"keys {i}"}))) for i in range(40)]
    doc, sent = _run(snap, embedder, *endless)
    assert doc["stop_reason"] == "budget"
    assert len(sent) <= 4 and len(doc["trace"]["steps"]) <= 4 + 4  # fact budget: 4 iterations, 4 tool calls
    assert doc["citations"]  # answered from what was read, offline


def test_the_model_cannot_widen_its_scope(served_snapshot):
    snap, embedder = served_snapshot
    acme = next(aid for aid, a in snap.articles.items() if a["tenant"] == "acme")
    acme_chunk = snap.chunks_by_article[acme][0]
    doc, sent = _run(
        snap,
        embedder,
        tool_calls(
            ("knowledge_read_many", json.dumps({"targets": [{"article_id": acme}, {"chunk_id": acme_chunk}], "tenant": "acme"})),
            ("knowledge_search", json.dumps({"query": "pricing page", "tenant": "acme", "kb_ids": ["petrichor-zh"], "scope": "all"})),
        ),
        final("Nothing to cite."),
        final("Still nothing."),
        question="What does the pasted customer note in the support escalation notes ask for?",
        scope=Scope(tenant="globex"),
    )
    assert all(snap.articles[e["article_id"]]["tenant"] == "globex" for e in doc["evidence"])
    assert all(c["article_id"] not in {acme} and snap.articles[c["article_id"]]["tenant"] == "globex" for c in doc["citations"])
    seed = sent[0]["messages"][-1]["content"]
    if "ignore the rules" in seed:  # the injected note reached the model inside the data block only
        assert seed.index("<data>") < seed.index("ignore the rules") < seed.rindex("</data>")
    results = [m["content"] for m in sent[1]["messages"] if m["role"] == "tool"]
    assert '"evidence": []' in results[0]  # both locators read as not found outside the key's tenant
    acme_ids = {aid for aid, a in snap.articles.items() if a["tenant"] == "acme"}
    assert not any(aid in results[1] for aid in acme_ids)
    assert doc["stop_reason"] == "offline_fallback"
    read = [loc.split(":", 1)[1] for s in doc["trace"]["steps"] for loc in s["locators"] if loc.startswith("chunk_id:")]
    assert read and all(snap.chunks[cid]["tenant"] == "globex" for cid in read)


def _seeded_chunk(snap, embedder) -> str:
    """The first chunk the run seeds into the prompt (the offline plan's first search, best first)."""
    return next(c["chunk_id"] for c in tools.search(snap, Scope(), QUESTION, embedder=embedder, limit=6)["candidates"] if c.get("chunk_id"))


@pytest.mark.parametrize("failure", [error_reply(500), error_reply(503)], ids=["500", "503"])
def test_a_failing_model_falls_back_to_the_offline_answer_not_to_not_found(served_snapshot, failure):
    snap, embedder = served_snapshot
    offline_doc = loop.answer(snap, QUESTION, Scope(), chat=OfflineAnswerer(), embedder=embedder)
    doc, sent = _run(snap, embedder, failure)
    assert len(sent) == 1 and doc["stop_reason"] == "model_error_fallback"
    assert doc["citations"] and [c["quote"] for c in doc["citations"]] == [c["quote"] for c in offline_doc["citations"]]
    assert any(s["tool"] == "answer" and s.get("error") for s in doc["trace"]["steps"])


def test_a_model_that_times_out_falls_back_to_the_offline_answer(served_snapshot):
    snap, embedder = served_snapshot
    server = FakeOpenAI().start()
    try:
        server.script(CHAT, chat_reply(json.dumps({"answer": "too late", "citations": []}), delay_s=3.0))
        slow = OpenAIChatModel(
            ModelEndpoint(base_url=server.base_url, model="test-model", api_key="k", timeout_s=0.5, max_retries=0), backoff_base_s=0.01
        )
        doc = loop.answer(snap, QUESTION, Scope(), chat=slow, embedder=embedder)
    finally:
        server.stop()
    assert doc["stop_reason"] == "model_error_fallback"
    assert doc["citations"] and "too late" not in doc["answer"]


def test_a_model_that_errs_once_then_refinds_seeded_evidence_still_answers(served_snapshot):
    """An unknown tool, then a search and a read that only re-find what the prompt already holds: neither
    is a repeat of an identical call, so the model's own answer comes back."""
    snap, embedder = served_snapshot
    seeded = _seeded_chunk(snap, embedder)
    sentence = _sentence(snap, seeded)
    doc, sent = _run(
        snap,
        embedder,
        tool_calls(("lookup_docs", json.dumps({"q": "key file"}))),
        tool_calls(("knowledge_search", json.dumps({"query": QUESTION}))),
        tool_calls(("knowledge_read", json.dumps({"chunk_id": seeded}))),
        final("The key file stores hashes [1].", ("e1", sentence)),
    )
    assert doc["stop_reason"] == "answered" and doc["answer"].startswith("The key file stores hashes")
    assert [c["quote"] for c in doc["citations"]] == [sentence]
    assert "unknown tool" in [m for m in sent[1]["messages"] if m["role"] == "tool"][0]["content"]
    assert len(sent) == 4


def test_a_read_naming_an_evidence_label_returns_the_held_evidence(served_snapshot):
    """A small model reads "e1" back as a chunk or article id after seeing it as a passage's label: the
    passage it already holds comes back, not a not-found error."""
    snap, embedder = served_snapshot
    seeded = _seeded_chunk(snap, embedder)
    sentence = _sentence(snap, seeded)
    doc, sent = _run(
        snap,
        embedder,
        tool_calls(("knowledge_read_many", json.dumps({"targets": [{"chunk_id": "e1"}, {"article_id": "e1"}]}))),
        final("The key file stores hashes [1].", ("e1", sentence)),
    )
    result = json.loads([m for m in sent[1]["messages"] if m["role"] == "tool"][0]["content"].split("<data>\n", 1)[1].rsplit("\n</data>", 1)[0])
    assert [e["evidence_id"] for e in result["evidence"]] == ["e1"] and "error" not in result
    assert doc["stop_reason"] == "answered" and [c["quote"] for c in doc["citations"]] == [sentence]


def test_repeated_identical_calls_end_the_run_with_no_progress(served_snapshot):
    snap, embedder = served_snapshot
    same = [tool_calls(("knowledge_search", json.dumps({"query": q}))) for q in ("key file", "Key  File", "key file ", "KEY FILE")]
    doc, sent = _run(snap, embedder, *same)
    assert doc["stop_reason"] == "no_progress" and len(sent) == 4
    assert [s.get("error") for s in doc["trace"]["steps"]].count("repeated call") == 3
    assert doc["citations"]  # answered offline from what was read


def test_a_follow_up_seeds_the_model_with_the_previous_turns_subject(served_snapshot):
    snap, embedder = served_snapshot
    fusion = "The default RRF constant is 60, and ranks start at 0:"
    history = [{"role": "user", "content": "What is reciprocal rank fusion?"}, {"role": "assistant", "content": "It merges ranked lists."}]
    server = FakeOpenAI().start()
    try:
        server.script(CHAT, final("It is 60 [1].", ("e1", fusion)))
        doc = loop.answer(snap, "What is its default constant?", Scope(), chat=_model(server), embedder=embedder, history=history)
        sent = server.calls(CHAT)
    finally:
        server.stop()
    prompt = sent[0]["messages"]
    assert prompt[1:3] == history and prompt[-1]["content"].startswith("Question: What is its default constant?")
    assert fusion in prompt[-1]["content"]  # the seeded evidence was searched with the previous turn's subject
    assert doc["stop_reason"] == "answered" and [c["quote"] for c in doc["citations"]] == [fusion]


def test_tool_calls_written_in_the_reply_text_are_run_as_tool_calls(served_snapshot):
    """A server that renders the model's chat template without parsing its output (llama-cpp-python's
    default handler) returns Qwen's `<tool_call>` blocks as the reply text: they are run as tool calls."""
    snap, embedder = served_snapshot
    hit = next(c for c in tools.search(snap, Scope(), QUESTION, embedder=embedder, limit=6)["candidates"] if c.get("chunk_id"))
    sentence = _sentence(snap, hit["chunk_id"])
    written = '<tool_call>\n{"name": "knowledge_read", "arguments": {"chunk_id": "%s"}}\n</tool_call>' % hit["chunk_id"]  # noqa: UP031 - an f-string would double the JSON's braces
    doc, sent = _run(snap, embedder, chat_reply(written), final("It stores hashes [1].", ("e1", sentence)))
    plan = doc["trace"]["plan"]
    assert len(sent) == 2 and plan[plan.index("answer") :] == ["answer", "read", "answer"]
    assistant = [m for m in sent[1]["messages"] if m["role"] == "assistant"][-1]
    assert assistant["tool_calls"][0]["function"]["name"] == "knowledge_read"
    result = [m for m in sent[1]["messages"] if m["role"] == "tool"][-1]
    assert hit["chunk_id"] in result["content"] or sentence[:40] in result["content"]
    assert doc["stop_reason"] == "answered" and [c["quote"] for c in doc["citations"]] == [sentence]


def test_an_answer_object_is_not_taken_for_a_written_tool_call():
    from petrichor_serving.agent.model_agent import text_tool_calls

    assert text_tool_calls('{"answer": "It is 60 [1].", "citations": []}', 0) == []
    assert text_tool_calls('{"name": "delete_everything", "arguments": {}}', 0) == []
    both = text_tool_calls(
        '<tool_call>{"name": "knowledge_search", "arguments": {"query": "rrf"}}</tool_call>\n<tool_call>{"name": "knowledge_outline", "arguments": "{\\"article_id\\": \\"a1\\"}"}',
        3,
    )
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in both] == [
        ("text_3_0", "knowledge_search", {"query": "rrf"}),
        ("text_3_1", "knowledge_outline", {"article_id": "a1"}),
    ]
    doubled = text_tool_calls('{{"name": "knowledge_search", "arguments": {"query": "RRF"}}}', 1)  # Qwen2.5's template example, tags dropped
    assert [(c["name"], json.loads(c["arguments"])) for c in doubled] == [("knowledge_search", {"query": "RRF"})]
    assert text_tool_calls("I will search now.", 0) == []


def _refusing_json_schema(path, body):
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return error_reply(422, "response_format.type: Input should be 'text' or 'json_object'")
    return None


@pytest.mark.parametrize("refuses_json_schema", [False, True], ids=["json_schema", "json_object-with-schema"])
def test_the_retry_is_held_to_the_answer_contract_by_structured_output(served_snapshot, refuses_json_schema):
    """The retry after an answer without a verified citation cannot call tools and carries the ANSWER
    contract as `response_format`: a JSON schema, or for a server refusing that (llama-cpp-python) a
    json_object with the schema, which its grammar enforces."""
    from petrichor_core.models import prompts

    snap, embedder = served_snapshot
    seeded = _seeded_chunk(snap, embedder)
    sentence = _sentence(snap, seeded)
    server = FakeOpenAI().start()
    try:
        if refuses_json_schema:
            server.gate = _refusing_json_schema
        server.script(CHAT, chat_reply("The key file stores hashes of the keys."), final("The key file stores hashes [1].", ("e1", sentence)))
        doc = loop.answer(snap, QUESTION, Scope(), chat=_model(server), embedder=embedder)
        sent = server.calls(CHAT)
    finally:
        server.stop()
    schema = prompts.ANSWER.contract.response_schema()
    first, retry = sent[0], sent[-1]
    assert "response_format" not in first and "tool_choice" not in first
    assert retry["tool_choice"] == "none" and "evidence ids are" in retry["messages"][-1]["content"]
    if refuses_json_schema:
        assert len(sent) == 3 and sent[1]["response_format"]["type"] == "json_schema"
        assert retry["response_format"] == {"type": "json_object", "schema": schema}
    else:
        assert len(sent) == 2 and retry["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema, "strict": True},
        }
    assert doc["stop_reason"] == "answered" and [c["quote"] for c in doc["citations"]] == [sentence]
    assert [s["arguments"].get("constrained") for s in doc["trace"]["steps"] if s["tool"] == "answer"] == [None, True]
