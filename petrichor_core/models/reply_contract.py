"""Reply contracts: one JSON Schema per prompt, the single declaration of what a reply must look like.

Two things derive from it. `response_schema` renders the strict form an endpoint's structured output
takes (`response_format.json_schema.schema`: every property required, `additionalProperties: false`,
maps keyed by what the request names). `violation` checks a parsed reply: the keys the contract marks
required must be there, and every declared key that is there must have its declared type; keys the
contract does not declare are ignored. A map (`keyed`) need not cover every key of the request: the
knowledge rules fill in what a reply leaves out.

Only the subset of JSON Schema the contracts use is understood: `type` (object, array, string,
integer, number, boolean), `properties`, `required`, `items`, and `additionalProperties` holding the
value schema of a keyed map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from petrichor_core.models.jsonparse import JSONReplyError, parse_json_reply
from petrichor_core.models.protocols import ModelError

JSON = Mapping[str, Any]

STRING: JSON = {"type": "string"}
INTEGER: JSON = {"type": "integer"}


def obj(properties: Mapping[str, JSON], required: Sequence[str] = ()) -> JSON:
    return {"type": "object", "properties": dict(properties), "required": list(required)}


def arr(items: JSON) -> JSON:
    return {"type": "array", "items": items}


def keyed(values: JSON) -> JSON:
    """A map whose keys the request names (chunk ids, section positions), each holding `values`."""
    return {"type": "object", "additionalProperties": values}


class ContractViolation(ModelError):
    """A reply of valid JSON in the wrong shape; `reply_text` is what the model sent, for the retry."""

    def __init__(self, op: str, detail: str, reply_text: str):
        super().__init__(op, f"reply is not valid JSON for the contract: {detail}")
        self.detail = detail
        self.reply_text = reply_text


@dataclass(frozen=True, eq=False)
class Contract:
    """A prompt's reply contract; compared and hashed by identity (each is a declared constant)."""

    name: str
    """The `json_schema.name` sent (letters, digits, `_` and `-`, at most 64)."""
    schema: JSON

    def response_schema(self, keys: Sequence[str] = ()) -> dict[str, Any]:
        """The strict schema for one request; `keys` are the keys of its keyed map, if it has one."""
        return _strict(self.schema, tuple(keys))

    def violation(self, reply: object) -> str | None:
        """The first way `reply` breaks the contract, briefly (`questions.chunk-001: expected array`), or None."""
        return _violation(self.schema, reply, "")

    def parse(self, op: str, text: str) -> dict[str, Any]:
        """The reply's JSON object that meets the contract (the first object found when none does).

        No JSON object at all is a plain `ModelError`; an object in the wrong shape is a
        `ContractViolation`, which the caller may answer with one retry.
        """
        try:
            reply = parse_json_reply(text, accept=lambda obj: self.violation(obj) is None)
        except JSONReplyError as error:
            raise ModelError(op, f"reply is not valid JSON for the contract: {error}") from error
        problem = self.violation(reply)
        if problem:
            raise ContractViolation(op, problem, text)
        return reply


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _is_keyed(schema: JSON) -> bool:
    return isinstance(schema.get("additionalProperties"), Mapping)


def _strict(schema: JSON, keys: tuple[str, ...]) -> dict[str, Any]:
    kind = schema["type"]
    if kind == "array":
        return {"type": "array", "items": _strict(schema["items"], keys)}
    if kind != "object":
        return {"type": kind}
    if _is_keyed(schema):
        properties = {k: _strict(schema["additionalProperties"], keys) for k in keys}
    else:
        properties = {k: _strict(v, keys) for k, v in schema["properties"].items()}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _violation(schema: JSON, value: object, path: str) -> str | None:
    kind = schema["type"]
    here = path or "reply"
    if not isinstance(value, _PY_TYPES[kind]) or (kind in ("integer", "number") and isinstance(value, bool)):
        return f"{here}: expected {kind}, got {_json_type(value)}"
    if kind == "array":
        for i, item in enumerate(cast(list[Any], value)):  # an array: `_PY_TYPES` checked it above
            problem = _violation(schema["items"], item, f"{path}[{i}]")
            if problem:
                return problem
    elif kind == "object":
        assert isinstance(value, dict)
        if _is_keyed(schema):
            children = {k: schema["additionalProperties"] for k in value}
        else:
            missing = [k for k in schema.get("required", ()) if k not in value]
            if missing:
                return f"{here}: missing " + ", ".join(f'"{k}"' for k in missing)
            children = {k: s for k, s in schema["properties"].items() if k in value}
        for key, child in children.items():
            problem = _violation(child, value[key], f"{path}.{key}" if path else key)
            if problem:
                return problem
    return None


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    for name, types in _PY_TYPES.items():
        if name != "number" and isinstance(value, types):
            return name
    return "number" if isinstance(value, float) else type(value).__name__
