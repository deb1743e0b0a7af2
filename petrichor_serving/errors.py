"""The one error mapping of the serving side: what a refused request says, whoever asked.

Every expected failure is a `ServiceError` (a status and a message) or a pydantic `ValidationError`
(400, the first offending field). `failure()` turns either into a `Failure`; each surface renders that
in its own shape: the HTTP API as `{"error": ...}` with the status, `/v1` in OpenAI's shape, MCP as a
tool error, the model agent as an error result the model can act on. Anything else is a bug and is
left to propagate.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

MAX_ERROR_CHARS = 200


class ServiceError(Exception):
    """A request the service refuses: `status` is the HTTP status it answers with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status
        self.message = message


class ToolError(ServiceError, ValueError):
    """A request a knowledge tool cannot serve (bad locator, out of scope, unknown id): a 4xx."""


@dataclass(frozen=True)
class Failure:
    status: int
    message: str


def failure(exc: BaseException) -> Failure | None:
    """The status and message `exc` answers with, or None when it is not an expected failure."""
    if isinstance(exc, ServiceError):
        return Failure(exc.status, exc.message)
    if isinstance(exc, ValidationError):
        return Failure(400, validation_message(exc))
    return None


def short_error(message: str) -> str:
    """An error text of at most `MAX_ERROR_CHARS`: messages may quote an id or a field, and input can be huge."""
    return message if len(message) <= MAX_ERROR_CHARS else message[: MAX_ERROR_CHARS - 1] + "…"


def validation_message(exc: ValidationError) -> str:
    """The first offending field and what it should be; never the input itself (it may be large)."""
    errors = exc.errors(include_input=False, include_url=False)
    field = ".".join(str(part) for part in errors[0]["loc"] if isinstance(part, (str, int)) and part not in ("str", "list[str]", "int"))
    same = [e["msg"] for e in errors if e["loc"][:1] == errors[0]["loc"][:1]]
    return short_error(f"{field or 'body'}: {' or '.join(dict.fromkeys(same))}")
