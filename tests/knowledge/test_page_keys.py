import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_core.models.protocols import CallContext
from petrichor_pipeline.knowledge.candidates import ExistingPage, extract_candidates
from petrichor_pipeline.knowledge.page_keys import (
    CandidateKey,
    candidate_page_key,
    fnv_hash,
    infer_kind,
    normalize_any_page_key,
    normalize_page_key,
)

from .doubles import ScriptedChatModel, returns


@pytest.mark.parametrize(
    ("raw", "kind", "name", "expected"),
    [
        ("entity/OpenAI API", "entity", "OpenAI API", "entity-openai-api"),
        ("", "concept", "检索增强生成", "concept-检索增强生成"),
        ("concept-foo", "concept", "Foo", "concept-foo"),
        ("Concept:RAG", "concept", "RAG", "concept-conceptrag"),
    ],
)
def test_reference_examples(raw, kind, name, expected):
    assert normalize_page_key(raw, kind, name) == expected


def test_separators_and_disallowed_characters():
    assert normalize_page_key("a b/c\\d#e?f&g=h", "entity", "x") == "entity-a-b-c-d-e-f-g-h"
    assert normalize_page_key("  --Redis  Sentinel--  ", "entity", "x") == "entity-redis-sentinel"
    assert normalize_page_key("v1.2_beta（测试）", "entity", "x") == "entity-v1.2_beta测试"
    assert normalize_page_key(None, "entity", "Redis") == "entity-redis"
    assert normalize_page_key("entity//:Redis", "entity", "Redis") == "entity-redis"


def test_hash_fallback_when_nothing_safe_remains():
    assert normalize_page_key("", "entity", "ÄÖÜ") == "entity-" + fnv_hash("ÄÖÜ")[:12]
    assert normalize_page_key("日本語のかな", "concept", "かな") == "concept-日本語"  # Han kept, kana dropped
    assert normalize_page_key("ひらがな", "concept", "ひらがな") == "concept-" + fnv_hash("ひらがな")[:12]


def test_fnv_is_fnv1a_64():
    assert fnv_hash("") == "cbf29ce484222325"
    assert fnv_hash("a") == "af63dc4c8601ec8c"


def test_idempotent_on_canonical_keys():
    for key in ("entity-openai-api", "concept-检索增强生成", "concept-conceptrag", "entity-" + fnv_hash("x")[:12]):
        assert normalize_any_page_key(key) == key


def test_kind_inference_for_bare_keys():
    assert infer_kind("Concept/RAG") == "concept"
    assert infer_kind("concept-rag") == "concept"
    assert infer_kind("conceptual") == "entity"
    assert infer_kind("entity-redis") == "entity"
    assert normalize_any_page_key("concept/RAG 方法") == "concept-rag-方法"
    assert normalize_any_page_key("  ") == ""


@pytest.mark.slow  # 200 generated names, each keyed twice
@settings(max_examples=200, deadline=None)
@given(raw=st.text(max_size=40), name=st.text(max_size=20), kind=st.sampled_from(["entity", "concept"]))
def test_keys_are_safe_and_stable(raw, name, kind):
    key = normalize_page_key(raw, kind, name)
    assert key.startswith(kind + "-") and len(key) > len(kind) + 1
    assert re.fullmatch(r"[a-z0-9\u4e00-\u9fa5._-]+", key)
    assert normalize_page_key(key, kind, name) == key
    assert normalize_any_page_key(key) == key


@pytest.mark.parametrize(
    ("raw", "kind", "name", "aliases", "expected"),
    [
        ("entity/Redis Sentinel", "entity", "Redis Sentinel", (), "entity-redis-sentinel"),
        ("entity-redis_sentinel", "entity", "Redis Sentinel", (), "entity-redis_sentinel"),
        ("RedisSentinel", "entity", "Redis Sentinel", (), "entity-redissentinel"),
        ("concept/检索增强生成", "concept", "检索增强生成", (), "concept-检索增强生成"),
        ("concept/rag", "concept", "检索增强生成", ("RAG",), "concept-rag"),
        ("entity/主节点 心跳", "entity", "主节点心跳", (), "entity-主节点-心跳"),
    ],
)
def test_model_keys_derived_from_the_name_or_an_alias_are_kept(raw, kind, name, aliases, expected):
    assert candidate_page_key(raw, kind, name, aliases) == CandidateKey(expected)


@pytest.mark.parametrize(
    ("raw", "kind", "name", "expected", "rejected"),
    [
        ("entity-concepts-1", "entity", "Redis Sentinel", "entity-redis-sentinel", "entity-concepts-1"),
        ("concept/concepts-2", "concept", "故障转移", "concept-故障转移", "concept-concepts-2"),
        ("entity/sentinel", "entity", "Redis Sentinel", "entity-redis-sentinel", "entity-sentinel"),
        ("concept/failover", "concept", "故障转移", "concept-故障转移", "concept-failover"),
        ("entity/主从", "entity", "主从复制", "entity-主从复制", "entity-主从"),
        ("Concept:RAG", "concept", "RAG", "concept-rag", "concept-conceptrag"),
        ("entity/hiragana", "entity", "ひらがな", "entity-" + fnv_hash("ひらがな")[:12], "entity-hiragana"),
    ],
)
def test_model_keys_not_derived_from_the_name_are_replaced(raw, kind, name, expected, rejected):
    assert candidate_page_key(raw, kind, name) == CandidateKey(expected, rejected=rejected)


def test_an_existing_pages_key_may_be_reused_and_no_key_means_the_names_key():
    assert candidate_page_key("entity-redis-哨兵", "entity", "Redis Sentinel", known={"entity-redis-哨兵"}) == CandidateKey("entity-redis-哨兵")
    assert candidate_page_key(None, "concept", "故障转移") == CandidateKey("concept-故障转移")
    assert candidate_page_key("  ", "entity", "Redis Sentinel") == CandidateKey("entity-redis-sentinel")


def test_extraction_replaces_made_up_keys_keeps_their_relations_and_warns():
    reply = {
        "documentSummary": "讲 Redis 高可用。",
        "entities": [
            {"name": "Redis Sentinel", "pageKey": "entity-concepts-1"},
            {"name": "Redis", "pageKey": "entity/Redis"},
            {"name": "主节点", "pageKey": "entity-concepts-3"},
        ],
        "concepts": [{"name": "故障转移", "pageKey": "concept/failover"}, {"name": "主观下线", "pageKey": "concept-sdown"}],
        "relations": [
            {"fromPageKey": "entity-concepts-1", "toPageKey": "concept/failover", "relationType": "执行"},
            {"fromPageKey": "entity-redis", "toPageKey": "entity-concepts-1", "relationType": "包含"},
        ],
    }
    model = ScriptedChatModel(extract_candidates=returns(reply))
    existing = [ExistingPage("concept-sdown", "concept", "主观下线")]
    ex = extract_candidates(kb_name="运维", title="Redis", markdown="正文", document="正文", existing_pages=existing, model=model, ctx=CallContext())
    assert [c.page_key for c in ex.candidates] == ["entity-redis-sentinel", "concept-故障转移", "entity-redis", "concept-sdown", "entity-主节点"]
    assert [(r.from_key, r.to_key) for r in ex.relations] == [
        ("entity-redis-sentinel", "concept-故障转移"),
        ("entity-redis", "entity-redis-sentinel"),
    ]
    assert ex.warnings == (
        "3 page key(s) from the model do not follow from the page name, the name's key is used: "
        "entity-concepts-1 → entity-redis-sentinel, entity-concepts-3 → entity-主节点, concept-failover → concept-故障转移",
    )
