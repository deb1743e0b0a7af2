"""The HTTP contract, declared once: every endpoint's request and response as a pydantic model.

Request models validate the handlers' input (strict JSON types, so `"5"` is not a limit and `true` is
not a number) and, with the response models, generate `/openapi.json`. Every limit of the API lives
here. Older field names are still accepted as aliases (`knowledge_base_id`, `subQueries`, `articleId`,
`message`, `nodes`); a `null` field counts as absent, so a later alias can still supply it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, model_validator

from petrichor_serving.agent.tools import MAX_READ_MANY

MAX_BODY_BYTES = 512 * 1024
MAX_QUESTION_CHARS = 8000
MAX_RESULTS = 20
"""A larger `limit` is capped, not refused."""
MAX_SUB_QUERIES = 3
"""Sub-queries past the third are dropped, not refused."""
MAX_HISTORY_ITEMS = 24
MAX_HISTORY_CHARS = 32_000
"""A chat's history: at most 24 user/assistant turns and 32,000 characters in all (reference §7.6)."""
DEFAULT_RESULTS = 10
DEFAULT_OUTLINE_NODES = 120


def _non_blank(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("must be a non-empty string")
    return stripped


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


Text = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS), AfterValidator(_non_blank)]
"""A question, query or id: at most 8,000 characters as sent, trimmed, not blank."""
Names = Annotated[str | list[str], AfterValidator(_as_list)]
"""One string or a list of strings; handlers always see a list."""


def _alias(*names: str) -> Any:
    return AliasChoices(*names)


class Request(BaseModel):
    """Strict JSON types; unknown fields are ignored (a body's `tenant` never reaches the scope)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data


class SearchRequest(Request):
    query: Text
    kb_ids: Names | None = Field(None, validation_alias=_alias("kb_ids", "knowledge_base_id"))
    article_id: str | None = None
    limit: Annotated[int, Field(ge=1, description=f"capped at {MAX_RESULTS}"), AfterValidator(lambda n: min(n, MAX_RESULTS))] = DEFAULT_RESULTS
    sub_queries: Annotated[Names, AfterValidator(lambda qs: qs[:MAX_SUB_QUERIES]), Field(description=f"only the first {MAX_SUB_QUERIES} are searched")] | None = Field(
        None, validation_alias=_alias("sub_queries", "subQueries")
    )


class OutlineRequest(Request):
    article_id: Text = Field(validation_alias=_alias("article_id", "articleId"))
    kb_ids: Names | None = Field(None, validation_alias=_alias("kb_ids", "knowledge_base_id"))
    max_nodes: int = DEFAULT_OUTLINE_NODES


class Locator(BaseModel):
    """Exactly one of chunk_id, page_key, node_key; article_id alone reads the whole article."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    chunk_id: str | None = None
    page_key: str | None = None
    node_key: str | None = None
    article_id: str | None = None
    kb_id: str | None = None

    def target(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class ReadRequest(Request, Locator):
    """One locator in the body itself, or up to four in `targets`."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    kb_ids: Names | None = None
    targets: list[Locator] | None = Field(None, min_length=1, max_length=MAX_READ_MANY, validation_alias=_alias("targets", "nodes"))

    def target(self) -> dict[str, Any]:
        return self.model_dump(include=set(Locator.model_fields), exclude_none=True)


class Turn(BaseModel):
    """One earlier turn of the conversation: user or assistant text only (no tool or system turns)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    role: Literal["user", "assistant"]
    content: str


def _bounded_history(turns: list[Turn]) -> list[Turn]:
    if sum(len(t.content) for t in turns) > MAX_HISTORY_CHARS:
        raise ValueError(f"history holds more than {MAX_HISTORY_CHARS} characters")
    return turns


class ChatRequest(Request):
    question: Text = Field(validation_alias=_alias("question", "message"))
    kb_ids: Names | None = Field(None, validation_alias=_alias("kb_ids", "knowledge_base_id"))
    article_id: str | None = Field(None, description="private chat only: limit the answer to one article")
    history: Annotated[list[Turn], Field(max_length=MAX_HISTORY_ITEMS), AfterValidator(_bounded_history)] = Field(
        default_factory=list, description=f"earlier turns: at most {MAX_HISTORY_ITEMS} items and {MAX_HISTORY_CHARS} characters"
    )

    def turns(self) -> list[dict[str, str]]:
        return [t.model_dump() for t in self.history]


class ErrorResponse(BaseModel):
    error: str


class HealthResponse(BaseModel):
    status: str
    """`ok` (200) or `degraded` (503)"""
    snapshot_version: str | None
    reason: str | None = None
    """why the service is degraded (absent when ok)"""


class SnapshotStatusResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    current: dict[str, Any] | None
    refused: dict[str, Any] | None


class Candidate(BaseModel):
    chunk_id: str | None = None
    page_key: str | None = None
    node_key: str | None = None
    article_id: str
    title: str
    heading_path: list[str]
    snippet: str
    routes: list[str]
    score: float


class SearchResponse(BaseModel):
    query: str
    snapshot_version: str
    candidates: list[Candidate]
    diagnostics: dict[str, Any]


class OutlineResponse(BaseModel):
    article_id: str
    kb_id: str
    title: str
    article_version: str
    source: str = Field(description='"wiki_tree", "chunk_headings" or "none"')
    node_count: int
    truncated: bool
    nodes: list[dict[str, Any]]


class ReadResponse(BaseModel):
    results: list[dict[str, Any]]
    requested_count: int
    skipped_count: int
    failures: list[dict[str, Any]]


class Citation(BaseModel):
    marker: int
    chunk_id: str
    article_id: str
    article_version: str
    heading_path: list[str] = []
    quote_start: int
    quote_end: int
    quote: str


class AnswerResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    answer: str
    citations: list[Citation]
    evidence: list[dict[str, Any]]
    trace_id: str
    snapshot_version: str
    stop_reason: str = Field(description='"answered", "budget", "no_progress", "nothing_found", "model_error" or "offline_fallback"')


class TraceResponse(BaseModel):
    """A run as `GET /api/traces/{trace_id}` returns it: to the principal that made it only."""

    model_config = ConfigDict(extra="allow")

    trace_id: str
    snapshot_version: str
    question_class: str
    plan: list[str]
    steps: list[dict[str, Any]] = Field(description="tool calls: tool, arguments, returned locators, ms, error")
    stop_reason: str
    dropped_citations: list[dict[str, Any]]


class OpenAPIResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
