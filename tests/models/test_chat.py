"""OpenAIChatModel against a real HTTP server on 127.0.0.1, through the real `openai` client."""

from __future__ import annotations

import json
import threading
import time

import pytest

from petrichor_core.config import BuildLimits, ModelEndpoint
from petrichor_core.models import prompts as PROMPTS
from petrichor_core.models.chat import OpenAIChatModel
from petrichor_core.models.prompts import CONTRACT_WINS_LINE
from petrichor_core.models.protocols import CallContext, EvidenceText, ModelError, QuestionChunk, UsageMeter
from petrichor_core.models.usage import RunMeter
from petrichor_core.versions import CHAT_PROMPT_VERSION

from .fake_openai import CHAT, FakeOpenAI, Reply, chat_reply, error_reply

QUESTIONS = {"questions": {"chunk-001": ["Q1?", "Q2?", "Q3?"]}}
CHUNKS = [QuestionChunk("chunk-001", "Docker", ("安装", "Docker"), "使用 docker compose 启动。")]


def make_model(server: FakeOpenAI, meter: UsageMeter | None = None, timeout_s: float = 5.0, max_retries: int = 3) -> OpenAIChatModel:
    endpoint = ModelEndpoint(base_url=server.base_url, model="test-model", api_key="k", timeout_s=timeout_s, max_retries=max_retries)
    return OpenAIChatModel(endpoint, BuildLimits(), meter, backoff_base_s=0.01)


def ask(model: OpenAIChatModel, article_id: str = "art-1", guide: str = "") -> dict:
    return model.generate_questions(CHUNKS, CallContext(article_id=article_id, guide=guide))


def test_fingerprint_names_model_and_prompt_version(fake_openai: FakeOpenAI) -> None:
    assert make_model(fake_openai).fingerprint == f"openai:test-model:{CHAT_PROMPT_VERSION}"


@pytest.mark.parametrize(
    "content",
    [
        json.dumps(QUESTIONS),
        "Sure! Here are the questions: " + json.dumps(QUESTIONS) + " Hope this helps {:)}",
        "```json\n" + json.dumps(QUESTIONS, indent=2) + "\n```",
        json.dumps(json.dumps(QUESTIONS)),
    ],
    ids=["plain", "inside-prose", "json-fence", "double-encoded"],
)
def test_reply_shapes_parse_to_the_contract(fake_openai: FakeOpenAI, content: str) -> None:
    fake_openai.script(CHAT, chat_reply(content))
    assert ask(make_model(fake_openai)) == QUESTIONS


def test_request_carries_rendered_chunks_guide_and_contract_last(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, chat_reply(json.dumps(QUESTIONS)))
    ask(make_model(fake_openai), guide="# 领域\n\n面向运维读者。")
    request = fake_openai.calls(CHAT)[0]
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert request["model"] == "test-model"
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "questions", "schema": PROMPTS.QUESTIONS.contract.response_schema(["chunk-001"]), "strict": True},
    }
    assert system.startswith("你是知识库问题生成器。")
    assert "<compile_guide>\n# 领域\n\n面向运维读者。\n</compile_guide>" in system
    assert system.index("</compile_guide>") < system.index(CONTRACT_WINS_LINE)
    assert system.rstrip().endswith(CONTRACT_WINS_LINE)
    assert user == '<chunk id="chunk-001" heading="安装 > Docker">\n使用 docker compose 启动。\n</chunk>'


def test_answer_prompt_numbers_the_evidence(fake_openai: FakeOpenAI) -> None:
    reply = {"answer": "用 compose 启动 [1]", "citations": [{"marker": 1, "evidence_id": "e1", "quote": "docker compose"}]}
    fake_openai.script(CHAT, chat_reply(json.dumps(reply, ensure_ascii=False)))
    evidence = [EvidenceText("e1", "部署", ("安装",), "使用 docker compose 启动。")]
    assert make_model(fake_openai).answer("怎么启动？", evidence, CallContext(guide="ignored")) == reply
    request = fake_openai.calls(CHAT)[0]
    assert '<evidence n="1" id="e1"' in request["messages"][1]["content"]
    assert "<compile_guide>" not in request["messages"][0]["content"]


@pytest.mark.parametrize("content", ["not json at all", '{"questions": [1, 2', '["chunk-001"]'])
def test_a_reply_without_a_json_object_is_a_model_error_and_not_retried(fake_openai: FakeOpenAI, content: str) -> None:
    meter = UsageMeter()
    fake_openai.script(CHAT, chat_reply(content))
    with pytest.raises(ModelError, match="reply is not valid JSON for the contract") as caught:
        ask(make_model(fake_openai, meter))
    assert caught.value.op == "kb.build.questions"
    assert len(fake_openai.calls(CHAT)) == 1, "a reply with no JSON object is not retried"
    assert (meter.total.calls, meter.total.failures) == (1, 1)


def test_429_is_retried_and_both_calls_are_counted(fake_openai: FakeOpenAI) -> None:
    meter = UsageMeter()
    fake_openai.script(CHAT, error_reply(429, "slow down"), chat_reply(json.dumps(QUESTIONS), prompt_tokens=20, completion_tokens=5))
    assert ask(make_model(fake_openai, meter)) == QUESTIONS
    assert len(fake_openai.calls(CHAT)) == 2
    assert (meter.total.calls, meter.total.failures) == (2, 1)
    assert (meter.total.prompt_tokens, meter.total.completion_tokens) == (20, 5)


def test_5xx_beyond_the_retry_budget_fails_after_exactly_1_plus_max_retries(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, *[error_reply(500) for _ in range(3)], chat_reply(json.dumps(QUESTIONS)))
    with pytest.raises(ModelError, match=r"HTTP 500.*after 3 attempts"):
        ask(make_model(fake_openai, max_retries=2))
    assert len(fake_openai.calls(CHAT)) == 3


def test_other_4xx_is_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, error_reply(400, "bad request"), chat_reply(json.dumps(QUESTIONS)))
    with pytest.raises(ModelError, match="HTTP 400"):
        ask(make_model(fake_openai))
    assert len(fake_openai.calls(CHAT)) == 1


def test_a_reply_slower_than_the_timeout_is_a_model_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, Reply(body={}, delay_s=2.0))
    started = time.perf_counter()
    with pytest.raises(ModelError, match="timed out"):
        ask(make_model(fake_openai, timeout_s=0.5, max_retries=0))
    assert time.perf_counter() - started < 1.8


def test_a_timeout_is_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(CHAT, Reply(body={}, delay_s=2.0), chat_reply(json.dumps(QUESTIONS)))
    assert ask(make_model(fake_openai, timeout_s=0.5, max_retries=1)) == QUESTIONS
    assert len(fake_openai.calls(CHAT)) == 2


def test_usage_is_accounted_per_article_and_per_op(fake_openai: FakeOpenAI) -> None:
    meter = UsageMeter()
    fake_openai.script(
        CHAT,
        chat_reply(json.dumps(QUESTIONS), prompt_tokens=100, completion_tokens=10),
        chat_reply(json.dumps(QUESTIONS), prompt_tokens=50, completion_tokens=5),
        chat_reply(json.dumps(QUESTIONS), prompt_tokens=1, completion_tokens=1),
    )
    model = make_model(fake_openai, meter)
    ask(model, "art-1")
    ask(model, "art-2")
    ask(model, "art-1")
    assert (meter.by_article["art-1"].calls, meter.by_article["art-1"].prompt_tokens, meter.by_article["art-1"].completion_tokens) == (2, 101, 11)
    assert (meter.by_article["art-2"].calls, meter.by_article["art-2"].prompt_tokens) == (1, 50)
    assert meter.by_op["kb.build.questions"].calls == 3
    assert meter.total.prompt_tokens == 151
    assert meter.total.latency_s > 0


def test_model_calls_of_one_run_share_its_limit(fake_openai: FakeOpenAI) -> None:
    endpoint = ModelEndpoint(base_url=fake_openai.base_url, model="m", timeout_s=5.0)
    run = RunMeter(model_concurrency=2)
    models = [OpenAIChatModel(endpoint, BuildLimits(model_concurrency=64), run) for _ in range(2)]
    fake_openai.script(CHAT, *[chat_reply(json.dumps(QUESTIONS), delay_s=0.15) for _ in range(6)])
    threads = [threading.Thread(target=ask, args=(models[i % 2],)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(fake_openai.calls(CHAT)) == 6
    assert fake_openai.peak_in_flight == 2
