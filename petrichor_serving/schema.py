"""The HTTP contract, declared once: every endpoint's request and response as a pydantic model.

Request models validate the handlers' input (strict JSON types, so `"5"` is not a limit and `true` is
not a number) and, with the response models, generate `/openapi.json`. The knowledge tools' requests
extend `toolspec`'s models, where their limits and their replies live; every other limit of the API lives here. Older
field names are still accepted as aliases (`knowledge_base_id`, `subQueries`, `articleId`, `message`,
`nodes`); a `null` field counts as absent, so a later alias can still supply it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.types.jsonrpc import JSONRPCMessage
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, model_validator
from pydantic.json_schema import JsonDict

# the tool contract; `schema.MAX_RESULTS` and `schema.OutlineRequest` (the outline endpoint's body is the
# tool's arguments as they are) are the HTTP API's too
from petrichor_serving.toolspec import (
    MAX_QUESTION_CHARS,
    Id,
    Names,
    ReadArguments,
    Request,
    SearchArguments,
    Targets,
    Text,
    alias,
    optional_fields_take_null,
)
from petrichor_serving.toolspec import (
    MAX_RESULTS as MAX_RESULTS,
)
from petrichor_serving.toolspec import (
    OutlineRequest as OutlineRequest,
)

MAX_BODY_BYTES = 512 * 1024
MAX_HISTORY_ITEMS = 24
MAX_HISTORY_CHARS = 32_000
"""A chat's history: at most 24 user/assistant turns and 32,000 characters in all."""

SnapshotVersion = Annotated[str | None, Field(description="answer against this retained snapshot (`GET /api/snapshots`); default the current one")]


class SearchRequest(SearchArguments):  # knowledge_search's arguments, and the retained snapshot to search
    snapshot_version: SnapshotVersion = None


_LOCATORS = ("chunk_id", "page_key", "node_key")


def _one_locator(schema: dict[str, Any]) -> None:
    """State the read rule in the document too: `targets`, or a body naming at most one of chunk_id,
    page_key, node_key and at least one of them or article_id (an empty string names nothing)."""
    optional_fields_take_null(schema)
    named = {"type": "string", "minLength": 1}
    schema["anyOf"] = [
        {"required": ["targets"], "properties": {"targets": {"type": "array"}}},
        *({"required": [name], "properties": {name: named}} for name in (*_LOCATORS, "article_id")),
    ]
    pairs = [(a, b) for i, a in enumerate(_LOCATORS) for b in _LOCATORS[i + 1 :]]
    schema["not"] = {"anyOf": [{"required": [a, b], "properties": {a: named, b: named, "targets": {"type": "null"}}} for a, b in pairs]}


class ReadRequest(ReadArguments):
    """One locator in the body itself, or up to four in `targets`."""

    model_config = ConfigDict(json_schema_extra=_one_locator)

    targets: Targets | None = Field(None, validation_alias=alias("targets", "nodes"))


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
    question: Text = Field(validation_alias=alias("question", "message"))
    kb_ids: Names | None = Field(None, validation_alias=alias("kb_ids", "knowledge_base_id"))
    article_id: Id | None = Field(None, description="private chat only: limit the answer to one article")
    history: Annotated[list[Turn], Field(max_length=MAX_HISTORY_ITEMS), AfterValidator(_bounded_history)] = Field(
        default_factory=list, description=f"earlier turns: at most {MAX_HISTORY_ITEMS} items and {MAX_HISTORY_CHARS} characters"
    )

    snapshot_version: SnapshotVersion = None

    def turns(self) -> list[dict[str, str]]:
        return [t.model_dump() for t in self.history]


NonBlank = Annotated[Text, Field(json_schema_extra={"pattern": "\\S"})]
"""A `Text` query parameter, its one rule the schema can state (not blank) stated."""


class CitationQuery(BaseModel):
    """`GET /api/citations/resolve` parameters: a citation's article, version and offsets (query strings, so
    numbers are parsed from text)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    article_id: NonBlank
    article_version: NonBlank
    start: Annotated[int, Field(ge=0)]
    end: Annotated[int, Field(ge=1)]
    """Offsets that name no text of the version (`end <= start`, or past its end: rules no schema of one
    parameter can state) answer 404 as an unknown version does (`history.resolve_citation`): there is no
    such quote, and offsets the document allows are never refused with 400."""


class ArticleQuery(BaseModel):
    """`GET /api/articles/{article_id}` parameters."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    chunk_id: Id | None = Field(None, description="a chunk of this article: its heading path is returned too")


class ContentPart(BaseModel):
    """One part of an OpenAI message's content; only `text` parts carry a question."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    """An OpenAI chat message. System, developer and tool messages are accepted and ignored: the agent's
    instructions and tools are its own."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.text or "" for p in self.content if p.type == "text")
        return self.content or ""


_USER_QUESTION: JsonDict = {
    "type": "object",
    "required": ["role", "content"],
    "properties": {
        "role": {"const": "user"},
        "content": {
            "anyOf": [
                {"type": "string", "pattern": "\\S", "maxLength": MAX_QUESTION_CHARS},
                {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["type", "text"],
                        "properties": {"type": {"const": "text"}, "text": {"type": "string", "pattern": "\\S", "maxLength": MAX_QUESTION_CHARS}},
                    },
                },
            ]
        },
    },
}
"""The OpenAPI statement of "some message is a user question with text within the limit" (`contains`), so a
schema-valid body is one the endpoint answers. Content parts are joined, so the document states the one-part
case; several parts within the limit are accepted too."""


class ChatCompletionRequest(Request):
    """`POST /v1/chat/completions`: the last user message with text is the question, earlier user/assistant
    text the history; messages after the question (an assistant prefix, tool output) are ignored, as the agent
    writes its own reply.

    Other OpenAI fields (temperature, max_tokens, tools, ...) are ignored. An OpenAI client resends the
    whole conversation each turn, so the history keeps the most recent turns within the chat bounds
    instead of refusing a long conversation."""

    model: Text
    messages: list[ChatMessage] = Field(min_length=1, json_schema_extra={"contains": _USER_QUESTION})
    stream: bool = False

    @model_validator(mode="after")
    def _asks_a_question(self) -> ChatCompletionRequest:
        if self._question_index() is None:
            raise ValueError("a user message with text is required")
        if len(self.question()) > MAX_QUESTION_CHARS:
            raise ValueError(f"the last user message is over {MAX_QUESTION_CHARS} characters")
        return self

    def _question_index(self) -> int | None:
        for i in range(len(self.messages) - 1, -1, -1):
            if self.messages[i].role == "user" and self.messages[i].text().strip():
                return i
        return None

    def question(self) -> str:
        index = self._question_index()
        return "" if index is None else self.messages[index].text().strip()

    def turns(self) -> list[dict[str, str]]:
        """The earlier user/assistant turns, newest kept first within the history bounds, in order."""
        kept: list[dict[str, str]] = []
        chars = 0
        for m in reversed(self.messages[: self._question_index() or 0]):
            if m.role not in ("user", "assistant") or not m.text().strip():
                continue
            chars += len(m.text())
            if len(kept) == MAX_HISTORY_ITEMS or chars > MAX_HISTORY_CHARS:
                break
            kept.append({"role": m.role, "content": m.text()})
        return kept[::-1]


class ErrorResponse(BaseModel):
    error: str


class OpenAIErrorResponse(BaseModel):
    """`/v1` errors, in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`."""

    error: dict[str, str | None]


class ModelListResponse(BaseModel):
    """`GET /v1/models`: `petrichor` and one `petrichor/<kb_id>` per knowledge base the key may read."""

    object: Literal["list"]
    data: list[dict[str, Any]]


class ChatCompletionResponse(BaseModel):
    """A `chat.completion` (or, with `stream`, server-sent `chat.completion.chunk`s ending in `[DONE]`); the
    citations in `choices[0].message.citations` (streamed: `choices[0].delta.citations` of the last chunk)."""

    model_config = ConfigDict(extra="allow")

    id: str
    object: str
    created: int
    model: str
    choices: list[dict[str, Any]]
    petrichor: dict[str, Any] = Field(description="trace_id, snapshot_version, stop_reason")


class McpMessage(RootModel[JSONRPCMessage]):
    """A JSON-RPC message of the Model Context Protocol (streamable HTTP transport): a request, a
    notification, a result or an error, as the MCP SDK's models define them. `/mcp` checks a body against
    this model strictly (JSON's own types, as the document states them) before the SDK reads it."""


_EVENT_STREAM = {
    "text/event-stream": {
        "schema": {  # one event (OpenAPI 3.1 reads an event stream's schema per event)
            "type": "object",
            "required": ["data"],
            "properties": {
                "event": {"type": "string"},
                "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": {"$ref": "#/components/schemas/McpMessage"}},
                "id": {"type": "string"},
                "retry": {"type": "integer"},
            },
        }
    }
}
_RPC_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/McpMessage"}}}
_KEY_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}}
MCP_RESPONSES: dict[str, dict[str, Any]] = {
    "post": {
        "200": {"description": "A request's reply, as an event stream", "content": _EVENT_STREAM},
        "202": {"description": "A notification, result or error accepted (no body)"},
        "400": {"description": "Not JSON, or not a JSON-RPC message", "content": _RPC_ERROR},
        "401": {"description": "Missing or invalid API key", "content": _KEY_ERROR},
        "403": {"description": "Local mode: an Origin other than localhost (plain text)"},
        "406": {"description": "Accept does not allow both application/json and text/event-stream", "content": _RPC_ERROR},
        "413": {"description": f"Body over {MAX_BODY_BYTES // 1024} KiB", "content": _RPC_ERROR},
        "415": {"description": "Content-Type is not application/json", "content": _RPC_ERROR},
        "421": {"description": "Local mode: a Host other than localhost (plain text)"},
    },
    "get": {
        "200": {"description": "The server-to-client event stream, open until the client leaves", "content": _EVENT_STREAM},
        "401": {"description": "Missing or invalid API key", "content": _KEY_ERROR},
        "403": {"description": "Local mode: an Origin other than localhost (plain text)"},
        "406": {"description": "Accept does not allow text/event-stream", "content": _RPC_ERROR},
        "421": {"description": "Local mode: a Host other than localhost (plain text)"},
    },
}
"""What `/mcp` answers, by method and status: the MCP transport's own content types (an event stream, an
empty 202, JSON-RPC errors), the 401 every secured endpoint gives, and the SDK's plain-text refusals of a
foreign Host or Origin (local mode only), which have no body schema."""


class HealthResponse(BaseModel):
    status: str
    """`ok` (200) or `degraded` (503)"""
    snapshot_version: str | None
    reason: str | None = None
    """why the service is degraded (absent when ok)"""


class ServedSnapshot(BaseModel):
    """The snapshot being served; an anonymous caller sees its version and creation time only."""

    version: str
    created_at: str | None
    parent_version: str | None = None
    rows: dict[str, int] | None = Field(None, description="row counts the caller may read: every table in local mode, a key's articles and chunks")
    vector_tables: dict[str, Any] | None = None
    vectors: str | None = None
    loaded_at: float | None = None
    load_seconds: float | None = None


class RefusedSnapshot(BaseModel):
    version: str | None = Field(description="the version CURRENT names; null when CURRENT is missing or unreadable")
    error: str | None = Field(None, description="why it was refused (with a key or in local mode)")


class SnapshotStatusResponse(BaseModel):
    status: Literal["ok", "degraded"]
    current: ServedSnapshot | None
    refused: RefusedSnapshot | None
    pointer: str | None = Field(description="the version CURRENT names right now")


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
    stop_reason: str = Field(description='"answered", "budget", "no_progress", "nothing_found", "model_error_fallback" or "offline_fallback"')


class ArticleResponse(BaseModel):
    """An article as `GET /api/articles/{article_id}` returns it: citation offsets index `content` in code points."""

    article_id: str
    article_version: str
    kb_id: str
    title: str
    content: str
    heading_path: list[str] | None = Field(None, description="the heading path of `?chunk_id=` when that chunk is in this article")
    snapshot_version: str


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


class CitationResponse(BaseModel):
    quote: str = Field(description="exactly content[start:end] of that article version")
    article_id: str
    article_version: str
    title: str
    heading_path: list[str]


class RetainedSnapshot(BaseModel):
    version: str
    created_at: str
    current: bool


class SnapshotsResponse(BaseModel):
    snapshots: list[RetainedSnapshot]


class OpenAPIResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
