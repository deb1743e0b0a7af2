"""Structured-output hints and contract retries against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from petrichor_core.config import BuildLimits, ModelEndpoint, load_settings
from petrichor_core.models import prompts
from petrichor_core.models.chat import OpenAIChatModel
from petrichor_core.models.protocols import (
    CallContext,
    CandidateRequest,
    EvidenceText,
    ModelError,
    PageRequest,
    QuestionChunk,
    TreeNodeText,
    UsageMeter,
)
from petrichor_pipeline.knowledge.candidates import extract_candidates
from petrichor_pipeline.knowledge.questions import generate_questions, template_questions

from .fake_openai import CHAT, FakeOpenAI, Reply, chat_reply, error_reply

CTX = CallContext(article_id="art-1")
CHUNKS = [
    QuestionChunk("chunk-001", "哨兵", ("Redis", "哨兵"), "Sentinel 监控主节点。"),
    QuestionChunk("chunk-002", "切换", ("Redis", "切换"), "主节点下线后选出新的主节点。"),
]
GOOD_QUESTIONS = {
    "questions": {"chunk-001": ["哨兵做什么？", "哨兵监控谁？", "如何部署哨兵？"], "chunk-002": ["何时切换？", "谁来切换？", "切换后怎样？"]}
}
WRONG_QUESTIONS = {"questions": ["哨兵做什么？", "何时切换？"]}


def make_model(server: FakeOpenAI, mode: str = "auto", meter: UsageMeter | None = None, max_retries: int = 3) -> OpenAIChatModel:
    endpoint = ModelEndpoint(base_url=server.base_url, model="small-model", timeout_s=5.0, max_retries=max_retries, response_format=mode)
    return OpenAIChatModel(endpoint, BuildLimits(), meter, backoff_base_s=0.01)


def reply_of(obj: dict[str, Any]) -> Reply:
    return chat_reply(json.dumps(obj, ensure_ascii=False))


def refusing(*forms: str, status: int = 400) -> Callable[[str, dict[str, Any]], Reply | None]:
    """A gate for an endpoint that rejects the given `response_format` types, as llama.cpp-style servers do."""

    def gate(path: str, body: dict[str, Any]) -> Reply | None:
        form = (body.get("response_format") or {}).get("type")
        if form in forms:
            return error_reply(status, f"Invalid value for 'response_format': type '{form}' is not supported")
        return None

    return gate


def sent_formats(server: FakeOpenAI) -> list[str | None]:
    return [(body.get("response_format") or {}).get("type") for body in server.calls(CHAT)]


@dataclass(frozen=True)
class Op:
    prompt: prompts.Prompt
    call: Callable[[OpenAIChatModel], dict[str, Any]]
    keys: tuple[str, ...]
    reply: dict[str, Any]


OPS = {
    "questions": Op(prompts.QUESTIONS, lambda m: m.generate_questions(CHUNKS, CTX), ("chunk-001", "chunk-002"), GOOD_QUESTIONS),
    "candidates": Op(
        prompts.CANDIDATES,
        lambda m: m.extract_candidates(CandidateRequest("运维", "Redis", "# Redis"), CTX),
        (),
        {
            "documentSummary": "讲哨兵。",
            "entities": [{"name": "Redis Sentinel", "pageKey": "entity/Redis Sentinel", "aliases": [], "summary": "监控"}],
            "concepts": [],
            "relations": [],
        },
    ),
    "catalog": Op(
        prompts.CATALOG,
        lambda m: m.plan_catalog([{"pageKey": "entity-redis"}], [], CTX),
        (),
        {"assignments": [{"pageKey": "entity-redis", "path": ["数据库"]}]},
    ),
    "pages": Op(
        prompts.PAGES,
        lambda m: m.generate_pages(PageRequest("Redis", "# Redis", [], [], [{"pageKey": "entity-redis"}]), CTX),
        (),
        {"pages": [{"pageKey": "entity-redis", "summary": "内存数据库。", "contentMd": "# Redis\n\n正文"}]},
    ),
    "tree_summaries": Op(
        prompts.TREE_SUMMARIES,
        lambda m: m.summarize_tree([TreeNodeText(1, 1, "安装", "正文"), TreeNodeText(3, 2, "配置", "正文")], CTX),
        ("1", "3"),
        {"summaries": {"1": "安装步骤。", "3": "配置项。"}},
    ),
    "answer": Op(
        prompts.ANSWER,
        lambda m: m.answer("谁监控主节点？", [EvidenceText("e1", "Redis", ("哨兵",), "Sentinel 监控主节点。")], CTX),
        (),
        {"answer": "Sentinel [1]", "citations": [{"marker": 1, "evidence_id": "e1", "quote": "Sentinel 监控主节点。"}]},
    ),
}


@pytest.mark.parametrize("name", list(OPS))
def test_an_endpoint_that_accepts_json_schema_gets_each_prompts_contract(fake_openai: FakeOpenAI, name: str) -> None:
    op = OPS[name]
    fake_openai.script(CHAT, reply_of(op.reply))
    model = make_model(fake_openai)
    assert op.call(model) == op.reply
    sent = fake_openai.calls(CHAT)[0]["response_format"]
    assert sent == {
        "type": "json_schema",
        "json_schema": {"name": op.prompt.contract.name, "schema": op.prompt.contract.response_schema(op.keys), "strict": True},
    }
    schema = sent["json_schema"]["schema"]
    assert set(schema["required"]) == set(op.prompt.contract.schema["properties"]), "strict: every top-level key required"
    assert schema["additionalProperties"] is False
    assert model.response_formats.known((fake_openai.base_url, "small-model")) == "json_schema"


def test_keyed_maps_name_the_requests_own_keys(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, reply_of(GOOD_QUESTIONS))
    make_model(fake_openai).generate_questions(CHUNKS, CTX)
    schema = fake_openai.calls(CHAT)[0]["response_format"]["json_schema"]["schema"]
    by_chunk = schema["properties"]["questions"]
    assert by_chunk == {
        "type": "object",
        "properties": {k: {"type": "array", "items": {"type": "string"}} for k in ("chunk-001", "chunk-002")},
        "required": ["chunk-001", "chunk-002"],
        "additionalProperties": False,
    }


def test_the_accepted_form_is_remembered_and_not_probed_again(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, reply_of(GOOD_QUESTIONS), reply_of(GOOD_QUESTIONS))
    model = make_model(fake_openai)
    model.generate_questions(CHUNKS, CTX)
    model.generate_questions(CHUNKS, CTX)
    assert sent_formats(fake_openai) == ["json_schema", "json_schema"]


def test_an_endpoint_refusing_response_format_falls_back_remembers_and_is_not_probed_again(fake_openai: FakeOpenAI) -> None:
    meter = UsageMeter()
    fake_openai.gate = refusing("json_schema", "json_object")
    fake_openai.script(CHAT, reply_of(GOOD_QUESTIONS), reply_of(GOOD_QUESTIONS), reply_of(GOOD_QUESTIONS))
    model = make_model(fake_openai, meter=meter)
    assert model.generate_questions(CHUNKS, CTX) == GOOD_QUESTIONS
    assert sent_formats(fake_openai) == ["json_schema", "json_object", None]
    assert model.response_formats.known((fake_openai.base_url, "small-model")) == "off"
    model.generate_questions(CHUNKS, CTX)
    assert sent_formats(fake_openai)[3:] == [None], "no second probe"
    assert "response_format" not in fake_openai.calls(CHAT)[3]
    assert (meter.total.calls, meter.total.failures) == (4, 2), "each refused probe is a counted, failed call"


def test_an_endpoint_refusing_only_json_schema_settles_on_json_object(fake_openai: FakeOpenAI) -> None:
    fake_openai.gate = refusing("json_schema", status=422)
    fake_openai.script(CHAT, reply_of(GOOD_QUESTIONS), reply_of(GOOD_QUESTIONS))
    model = make_model(fake_openai)
    model.generate_questions(CHUNKS, CTX)
    model.generate_questions(CHUNKS, CTX)
    assert sent_formats(fake_openai) == ["json_schema", "json_object", "json_object"]


def test_concurrent_first_requests_probe_once(fake_openai: FakeOpenAI) -> None:
    fake_openai.gate = refusing("json_schema", "json_object")
    fake_openai.script(CHAT, *[reply_of(GOOD_QUESTIONS) for _ in range(6)])
    model = make_model(fake_openai)
    threads = [threading.Thread(target=model.generate_questions, args=(CHUNKS, CTX)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    formats = sent_formats(fake_openai)
    assert Counter(formats) == {"json_schema": 1, "json_object": 1, None: 6}


def test_a_400_about_something_else_is_not_taken_for_a_refusal(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, error_reply(400, "context length exceeded"), reply_of(GOOD_QUESTIONS))
    model = make_model(fake_openai)
    with pytest.raises(ModelError, match="HTTP 400"):
        model.generate_questions(CHUNKS, CTX)
    model.generate_questions(CHUNKS, CTX)
    assert sent_formats(fake_openai) == ["json_schema", "json_schema"], "a failed request settles nothing"


def test_a_failed_probe_settles_nothing_and_the_next_request_probes(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, error_reply(503), reply_of(GOOD_QUESTIONS))
    model = make_model(fake_openai, max_retries=0)
    with pytest.raises(ModelError, match="HTTP 503"):
        model.generate_questions(CHUNKS, CTX)
    assert model.response_formats.known((fake_openai.base_url, "small-model")) is None
    model.generate_questions(CHUNKS, CTX)
    assert model.response_formats.known((fake_openai.base_url, "small-model")) == "json_schema"


@pytest.mark.parametrize(
    ("mode", "expected"), [("off", [None, None]), ("json_object", ["json_object", "json_object"]), ("json_schema", ["json_schema", "json_schema"])]
)
def test_configured_modes(fake_openai: FakeOpenAI, mode: str, expected: list[str | None]) -> None:
    fake_openai.script(CHAT, reply_of(GOOD_QUESTIONS), reply_of(GOOD_QUESTIONS))
    model = make_model(fake_openai, mode)
    model.generate_questions(CHUNKS, CTX)
    model.generate_questions(CHUNKS, CTX)
    assert sent_formats(fake_openai) == expected


def test_json_object_mode_refused_falls_back_to_none(fake_openai: FakeOpenAI) -> None:
    fake_openai.gate = refusing("json_object")
    fake_openai.script(CHAT, reply_of(GOOD_QUESTIONS))
    make_model(fake_openai, "json_object").generate_questions(CHUNKS, CTX)
    assert sent_formats(fake_openai) == ["json_object", None]


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PETRICHOR_LLM_RESPONSE_FORMAT", raising=False)
    assert load_settings().chat.response_format == "auto"
    monkeypatch.setenv("PETRICHOR_LLM_RESPONSE_FORMAT", " JSON_Object ")
    assert load_settings().chat.response_format == "json_object"
    monkeypatch.setenv("PETRICHOR_LLM_RESPONSE_FORMAT", "grammar")
    with pytest.raises(ValueError, match="auto, json_schema, json_object, off"):
        load_settings()


def test_a_wrong_shape_is_retried_once_with_the_problem_stated(fake_openai: FakeOpenAI) -> None:
    meter = UsageMeter()
    fake_openai.script(CHAT, reply_of(WRONG_QUESTIONS), reply_of(GOOD_QUESTIONS))
    assert make_model(fake_openai, meter=meter).generate_questions(CHUNKS, CTX) == GOOD_QUESTIONS
    first, retry = fake_openai.calls(CHAT)
    assert retry["messages"][:2] == first["messages"]
    assert retry["messages"][2] == {"role": "assistant", "content": json.dumps(WRONG_QUESTIONS, ensure_ascii=False)}
    follow_up = retry["messages"][3]
    assert follow_up["role"] == "user"
    assert follow_up["content"] == prompts.CONTRACT_RETRY_LINE.format(detail="questions: expected object, got array")
    assert retry["response_format"] == first["response_format"]
    assert (meter.total.calls, meter.total.failures) == (2, 1)


def test_an_object_meeting_the_contract_wins_over_an_example_before_it(fake_openai: FakeOpenAI) -> None:
    content = 'Format: {"questions": ["..."]}. Answer: ' + json.dumps(GOOD_QUESTIONS, ensure_ascii=False)
    fake_openai.script(CHAT, chat_reply(content))
    assert make_model(fake_openai).generate_questions(CHUNKS, CTX) == GOOD_QUESTIONS
    assert len(fake_openai.calls(CHAT)) == 1


@dataclass(frozen=True)
class Chunk:
    key: str
    position: int
    heading: str
    heading_path: tuple[str, ...]
    content: str


def test_always_the_wrong_shape_falls_back_to_templates_counted_and_warned(fake_openai: FakeOpenAI) -> None:
    meter = UsageMeter()
    fake_openai.script(CHAT, reply_of(WRONG_QUESTIONS), reply_of(WRONG_QUESTIONS))
    chunks = [Chunk(c.key, i, c.heading, c.heading_path, c.content) for i, c in enumerate(CHUNKS)]
    result = generate_questions(chunks, make_model(fake_openai, meter=meter), CTX)
    assert len(fake_openai.calls(CHAT)) == 2, "one retry, no more"
    assert result.questions["chunk-001"] == tuple(template_questions("Redis > 哨兵", CHUNKS[0].content))
    assert result.warnings == (
        "question generation failed, template questions used: reply is not valid JSON for the contract: questions: expected object, got array",
    )
    assert (meter.total.calls, meter.total.failures) == (2, 2)
    assert meter.by_op["kb.build.questions"].failures == 2


def test_candidates_of_the_wrong_shape_twice_leave_the_local_summary(fake_openai: FakeOpenAI) -> None:
    meter = UsageMeter()
    wrong = {"entities": ["Redis Sentinel"], "concepts": []}
    fake_openai.script(CHAT, reply_of(wrong), reply_of(wrong))
    ex = extract_candidates(
        kb_name="运维",
        title="Redis",
        markdown="# Redis\n\n哨兵监控主节点。",
        document="",
        existing_pages=[],
        model=make_model(fake_openai, meter=meter),
        ctx=CTX,
    )
    assert ex.candidates == () and ex.summary == "Redis 哨兵监控主节点。"
    assert ex.warnings == ("wiki candidate extraction failed: reply is not valid JSON for the contract: entities[0]: expected object, got string",)
    assert meter.by_op["kb.build.extraction"].failures == 2


def test_a_500_carrying_the_validation_error_of_the_field_is_a_refusal(fake_openai: FakeOpenAI) -> None:
    """llama-cpp-python's server reports a response_format it cannot validate as a 500 naming the field."""
    message = "1 validation error: {'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}"
    fake_openai.script(CHAT, error_reply(500, message), reply_of(GOOD_QUESTIONS))
    model = make_model(fake_openai)
    model.generate_questions(CHUNKS, CTX)
    assert sent_formats(fake_openai) == ["json_schema", "json_object"]


def test_a_500_without_a_validation_error_is_retried_with_the_same_form(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, error_reply(500, "response_format handler crashed"), reply_of(GOOD_QUESTIONS))
    make_model(fake_openai).generate_questions(CHUNKS, CTX)
    assert sent_formats(fake_openai) == ["json_schema", "json_schema"]
