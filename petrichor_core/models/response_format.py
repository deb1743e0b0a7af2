"""Structured-output hints (`response_format`) and what each endpoint is known to accept.

OpenAI's chat completions take `{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`
or `{"type": "json_object"}`; many compatible servers accept one, both or neither, and say so with a
400 naming the field (llama-cpp-python: a 500 carrying the validation error). The json_object form carries the contract's schema as `schema`, which llama.cpp's
servers (its own and llama-cpp-python's) turn into a grammar, so their replies are held to the contract too. So the hint is negotiated per endpoint (base URL + model): the first request
probes the best form the mode allows while later requests wait for its answer; a 400 that names
`response_format` / `json_schema` moves the endpoint one step down (json_schema → json_object → none)
and the request is sent again at once; any reply that arrives settles the form for good. The answers
live in the client that made the requests (`OpenAIChatModel`), never in a process-wide table.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import openai

from petrichor_core.models.protocols import ModelError
from petrichor_core.models.reply_contract import Contract
from petrichor_core.models.transport import reports_invalid_request

T = TypeVar("T")

JSON_SCHEMA = "json_schema"
JSON_OBJECT = "json_object"
NONE = "off"

LADDERS: dict[str, tuple[str, ...]] = {
    "auto": (JSON_SCHEMA, JSON_OBJECT, NONE),
    JSON_SCHEMA: (JSON_SCHEMA, NONE),
    JSON_OBJECT: (JSON_OBJECT, NONE),
    NONE: (NONE,),
}

_NAMES_THE_FIELD = re.compile(r"response_format|json_schema|json_object|response format", re.IGNORECASE)
_REJECTING_STATUS = (400, 422)


def response_format(form: str, contract: Contract, keys: Sequence[str] = ()) -> dict[str, Any] | None:
    """The `response_format` request field for `form`, or None to send none."""
    if form == JSON_SCHEMA:
        schema = contract.response_schema(keys)
        return {"type": "json_schema", "json_schema": {"name": contract.name, "schema": schema, "strict": True}}
    if form == JSON_OBJECT:
        # llama.cpp's servers (and other compatible ones) constrain a json_object reply to `schema`
        # when it is given; elsewhere the field is ignored, or refused like any hint (one step down)
        return {"type": "json_object", "schema": contract.response_schema(keys)}
    return None


def rejects_response_format(error: BaseException | None) -> bool:
    """A 400 (or 422), or a 5xx reporting a request validation error, whose message names the response_format
    field: the endpoint refuses the hint."""
    if not isinstance(error, openai.APIStatusError):
        return False
    if error.status_code not in _REJECTING_STATUS and not reports_invalid_request(error):
        return False
    return bool(_NAMES_THE_FIELD.search(f"{error.message} {error.body}"))


@dataclass
class _Endpoint:
    step: int = 0
    """Index into the mode's ladder: the best form not yet refused."""
    settled: bool = False
    probing: bool = False


class ResponseFormats:
    """Which form each endpoint accepts, learned from the first request that uses it."""

    def __init__(self, mode: str):
        if mode not in LADDERS:
            raise ValueError(f"unknown response_format mode {mode!r}; known: {', '.join(LADDERS)}")
        self.ladder = LADDERS[mode]
        self._endpoints: dict[tuple[str, str], _Endpoint] = {}
        self._cond = threading.Condition()

    def known(self, endpoint: tuple[str, str]) -> str | None:
        """The settled form for `endpoint`, or None while it is still unknown."""
        with self._cond:
            state = self._endpoints.get(endpoint)
            return self.ladder[state.step] if state and state.settled else None

    def call(self, endpoint: tuple[str, str], attempt: Callable[[str], T]) -> T:
        """Run `attempt(form)` with the endpoint's form, stepping down on each refusal of the hint.

        `attempt` raises `ModelError`; one caused by an `openai` error means no reply arrived (timeout,
        5xx), which settles nothing, so the next request probes again.
        """
        while True:
            form, probing = self._acquire(endpoint)
            try:
                result = attempt(form)
            except ModelError as error:
                cause = error.__cause__
                if form != NONE and rejects_response_format(cause):
                    self._refused(endpoint, form, probing)
                    continue
                self._release(endpoint, probing, settle=not isinstance(cause, openai.OpenAIError))
                raise
            self._release(endpoint, probing, settle=True)
            return result

    def _acquire(self, endpoint: tuple[str, str]) -> tuple[str, bool]:
        with self._cond:
            state = self._endpoints.setdefault(endpoint, _Endpoint(settled=len(self.ladder) == 1))
            while not state.settled and state.probing:
                self._cond.wait()
            if state.settled:
                return self.ladder[state.step], False
            state.probing = True
            return self.ladder[state.step], True

    def _refused(self, endpoint: tuple[str, str], form: str, probing: bool) -> None:
        with self._cond:
            state = self._endpoints[endpoint]
            if self.ladder[state.step] == form:
                state.step += 1
                state.settled = state.settled or self.ladder[state.step] == NONE
            if probing:
                state.probing = False
            self._cond.notify_all()

    def _release(self, endpoint: tuple[str, str], probing: bool, *, settle: bool) -> None:
        if not probing:
            return
        with self._cond:
            state = self._endpoints[endpoint]
            state.probing = False
            state.settled = state.settled or settle
            self._cond.notify_all()
