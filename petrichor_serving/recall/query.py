"""The search question, trimmed and checked once where it enters: the HTTP schema, the agent's tools or a
direct `search` call, whichever comes first. A `Query` passed further down is not checked again."""

from __future__ import annotations


class Query(str):
    """A question known to be trimmed and not blank (`Query.of`)."""

    __slots__ = ()

    @classmethod
    def of(cls, text: object) -> Query:
        """`text` trimmed; a `Query` already is. Raises `ValueError` for anything but a non-blank string."""
        if isinstance(text, Query):
            return text
        cleaned = text.strip() if isinstance(text, str) else ""
        if not cleaned:
            raise ValueError("query must be a non-empty string")
        return cls(cleaned)
