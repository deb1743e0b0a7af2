from __future__ import annotations

import json

import pytest

from petrichor_core.models.jsonparse import JSONReplyError, parse_json_reply

OBJ = {"questions": {"chunk-001": ["问题一？", "问题二？", "问题三？"]}}


def test_whole_reply() -> None:
    assert parse_json_reply("  " + json.dumps(OBJ, ensure_ascii=False) + "\n") == OBJ


def test_fenced_block_wins_over_braces_in_the_prose_before_it() -> None:
    reply = "Format is {key: value}. Here you go:\n```json\n" + json.dumps(OBJ) + "\n```\nDone."
    assert parse_json_reply(reply) == OBJ


def test_unlabelled_fence() -> None:
    assert parse_json_reply("```\n" + json.dumps(OBJ) + "\n```") == OBJ


def test_double_encoded() -> None:
    assert parse_json_reply(json.dumps(json.dumps(OBJ))) == OBJ


def test_first_balanced_object_in_prose() -> None:
    reply = 'Thinking {not json}... result: {"a": {"b": [1, 2, "}"]}} and then {"c": 3}'
    assert parse_json_reply(reply) == {"a": {"b": [1, 2, "}"]}}


def test_object_after_a_truncated_one() -> None:
    assert parse_json_reply('{"broken": [1, 2 ... {"ok": true}') == {"ok": True}


@pytest.mark.parametrize("reply", ["", "no json here", "[1, 2, 3]", '"just a string"', '{"unterminated": '])
def test_nothing_parses(reply: str) -> None:
    with pytest.raises(JSONReplyError):
        parse_json_reply(reply)
    assert issubclass(JSONReplyError, ValueError)


def test_accept_picks_the_first_object_it_accepts_else_the_first_found() -> None:
    reply = 'Example: {"example": true}. Real: ' + json.dumps(OBJ)
    assert parse_json_reply(reply) == {"example": True}
    assert parse_json_reply(reply, accept=lambda obj: "questions" in obj) == OBJ
    assert parse_json_reply(reply, accept=lambda obj: False) == {"example": True}
    assert parse_json_reply('{"wrapper": ' + json.dumps(OBJ) + "}", accept=lambda obj: "questions" in obj) == OBJ
