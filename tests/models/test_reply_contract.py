"""The reply contracts: strict schemas for structured output and the check of parsed replies."""

from __future__ import annotations

import json

import pytest

from petrichor_core.models import prompts
from petrichor_core.models.protocols import ModelError
from petrichor_core.models.reply_contract import INTEGER, STRING, Contract, ContractViolation, arr, keyed, obj

PAGES = prompts.PAGES.contract
QUESTIONS = prompts.QUESTIONS.contract
ALL = [p.contract for p in (prompts.QUESTIONS, prompts.CANDIDATES, prompts.CATALOG, prompts.PAGES, prompts.TREE_SUMMARIES, prompts.ANSWER)]


def test_the_strict_schema_requires_every_property_and_forbids_others() -> None:
    assert PAGES.response_schema() == {
        "type": "object",
        "properties": {
            "pages": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"pageKey": STRING, "summary": STRING, "contentMd": STRING},
                    "required": ["pageKey", "summary", "contentMd"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["pages"],
        "additionalProperties": False,
    }


def _objects(schema: dict) -> list[dict]:
    found = [schema] if schema["type"] == "object" else []
    children = list(schema.get("properties", {}).values()) + ([schema["items"]] if "items" in schema else [])
    return found + [o for child in children for o in _objects(child)]


@pytest.mark.parametrize("contract", ALL, ids=lambda c: c.name)
def test_every_contract_renders_a_strict_schema(contract: Contract) -> None:
    schema = contract.response_schema(["k1", "k2"])
    for node in _objects(schema):
        assert node["additionalProperties"] is False and node["required"] == list(node["properties"])
    assert json.loads(json.dumps(schema)) == schema
    assert len(contract.name) <= 64 and contract.name.replace("_", "").isalnum()


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ({"questions": {"chunk-001": ["a", "b", "c"]}}, None),
        ({"questions": {}, "note": "extra keys are ignored"}, None),
        ({}, 'reply: missing "questions"'),
        ([], "reply: expected object, got array"),
        ({"questions": ["a"]}, "questions: expected object, got array"),
        ({"questions": {"chunk-001": "a"}}, "questions.chunk-001: expected array, got string"),
        ({"questions": {"chunk-001": ["a", 2]}}, "questions.chunk-001[1]: expected string, got integer"),
    ],
)
def test_violations_name_the_first_problem(reply: object, problem: str | None) -> None:
    assert QUESTIONS.violation(reply) == problem


def test_integers_are_not_booleans_and_optional_keys_are_checked_when_present() -> None:
    contract = Contract("t", obj({"n": INTEGER, "items": arr(obj({"name": STRING}, required=["name"]))}, required=[]))
    assert contract.violation({}) is None
    assert contract.violation({"n": True}) == "n: expected integer, got boolean"
    assert contract.violation({"n": 1.5}) == "n: expected integer, got number"
    assert contract.violation({"items": [{"name": "x"}, {}]}) == 'items[1]: missing "name"'
    assert contract.violation({"n": None}) == "n: expected integer, got null"


def test_keyed_maps_without_keys_and_nested_in_arrays() -> None:
    contract = Contract("t", obj({"m": arr(keyed(STRING))}, required=["m"]))
    assert contract.response_schema(["a"])["properties"]["m"]["items"]["required"] == ["a"]
    assert contract.violation({"m": [{"a": "x", "b": "y"}]}) is None
    assert contract.violation({"m": [{"a": 1}]}) == "m[0].a: expected string, got integer"


def test_parse_tells_no_json_from_the_wrong_shape() -> None:
    with pytest.raises(ModelError) as no_json:
        QUESTIONS.parse("kb.build.questions", "sorry, I cannot")
    assert not isinstance(no_json.value, ContractViolation)
    with pytest.raises(ContractViolation) as wrong:
        QUESTIONS.parse("kb.build.questions", '{"answers": {}}')
    assert wrong.value.detail == 'reply: missing "questions"'
    assert wrong.value.reply_text == '{"answers": {}}'
    assert wrong.value.op == "kb.build.questions"
    assert QUESTIONS.parse("op", 'e.g. {"x": 1} then {"questions": {}}') == {"questions": {}}
