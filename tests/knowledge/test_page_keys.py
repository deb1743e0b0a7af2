import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_pipeline.knowledge.page_keys import fnv_hash, infer_kind, normalize_any_page_key, normalize_page_key


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
