"""The four knowledge tools' contract, declared once: name, description, request model, the reply its HTTP
endpoint returns and the limits they share.

The HTTP request models (`schema`) extend these models, the MCP tools (`mcp_server`) publish their JSON
schema as `inputSchema` and validate arguments with them, and the model agent (`agent.model_agent`) sends
the same schema without the scope fields as its OpenAI function parameters: the agent's scope is the
caller's and a model cannot change it. Each tool's function, and what every consumer derives from it,
is its entry in `tool_calls.TOOLS`, beside this contract: nothing here imports the agent, so the HTTP
contract does not depend on it.

Request models take strict JSON types (`"5"` is not a limit, `true` is not a number); unknown fields are
ignored; a `null` field counts as absent, so a later alias can still supply it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, cast

from pydantic import AfterValidator, AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator

from petrichor_serving.recall.config import DEFAULT_CONFIG
from petrichor_serving.recall.query import Query

MAX_QUESTION_CHARS = 8000
MAX_ID_CHARS = 512
"""A locator or id (article, chunk, page, node, knowledge base): far longer than any the build makes."""
MAX_RESULTS = 20
"""A larger `limit` is capped, not refused."""
MAX_SUB_QUERIES = 3
"""Sub-queries past the third are dropped, not refused."""
MAX_READ_MANY = 4
DEFAULT_RESULTS = DEFAULT_CONFIG.limit
DEFAULT_OUTLINE_NODES = 120
MIN_OUTLINE_NODES, MAX_OUTLINE_NODES = 10, 300
"""An outline's `max_nodes` is clamped to this range (the outline tool, every transport, and the agent, which
reads up to the most)."""


def _non_blank(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("must be a non-empty string")
    return stripped


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


Text = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS), AfterValidator(_non_blank)]
"""A question, query or id: at most 8,000 characters as sent, trimmed, not blank."""
SearchText = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS), AfterValidator(Query.of)]
"""A search query, checked once here (`recall.Query`): search and the tools take it as it is."""
Id = Annotated[str, Field(max_length=MAX_ID_CHARS)]
WholeNumber = Annotated[int, BeforeValidator(_integral)]
"""An integer as JSON Schema counts one: `5` or `5.0`, never `"5"`, `5.5` or `true`."""
if TYPE_CHECKING:
    Names = list[str]  # what handlers see: the validator makes every value a list
else:
    Names = Annotated[str | list[str], AfterValidator(_as_list)]
    """One string or a list of strings; handlers always see a list."""


def alias(*names: str) -> Any:
    return AliasChoices(*names)


def optional_fields_take_null(schema: dict[str, Any]) -> None:
    """Declare what `Request` accepts: `null` for every field that may be left out."""
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        variants = prop.get("anyOf", [prop])
        if name in required or any(v.get("type") == "null" for v in variants):
            continue
        meta = {k: prop.pop(k) for k in ("title", "description", "default") if k in prop}
        schema["properties"][name] = {"anyOf": [prop, {"type": "null"}], **meta}


class Request(BaseModel):
    """Strict JSON types; unknown fields are ignored (a body's `tenant` never reaches the scope)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, json_schema_extra=optional_fields_take_null)

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data


KB_IDS = "kb_ids"
"""The knowledge-base filter: a narrowing of the caller's scope, over HTTP and MCP only."""
_KB_FILTER = "limit to these knowledge bases (within the key's scope)"


class SearchArguments(Request):
    query: SearchText = Field(description="what to look for, in the articles' language")
    kb_ids: Names | None = Field(None, validation_alias=alias("kb_ids", "knowledge_base_id"), description=_KB_FILTER)
    article_id: Id | None = Field(None, description="search inside this article only")
    limit: Annotated[
        int, Field(ge=1, description=f"capped at {MAX_RESULTS}"), BeforeValidator(_integral), AfterValidator(lambda n: min(n, MAX_RESULTS))
    ] = DEFAULT_RESULTS
    sub_queries: (
        Annotated[Names, AfterValidator(lambda qs: qs[:MAX_SUB_QUERIES]), Field(description=f"only the first {MAX_SUB_QUERIES} are searched")] | None
    ) = Field(None, validation_alias=alias("sub_queries", "subQueries"))


class OutlineRequest(Request):
    article_id: Text = Field(validation_alias=alias("article_id", "articleId"), description="an article_id from a search result")
    kb_ids: Names | None = Field(None, validation_alias=alias("kb_ids", "knowledge_base_id"), description=_KB_FILTER)
    max_nodes: WholeNumber = Field(DEFAULT_OUTLINE_NODES, description=f"{MIN_OUTLINE_NODES} to {MAX_OUTLINE_NODES}")


class Window(BaseModel):
    """A search candidate's matched child window, passed back to read that chunk with its window marked."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    window_id: Id


class Locator(BaseModel):
    """Exactly one of chunk_id, page_key, node_key; article_id alone reads the whole article. Every field
    the read tools look at is declared (and so type-checked); others are dropped."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    chunk_id: Id | None = None
    page_key: Id | None = None
    node_key: Id | None = None
    article_id: Id | None = Field(None, description="alone: the whole article")
    kb_id: Id | None = Field(None, description="the knowledge base of a page_key")
    window: Window | None = Field(None, description="with chunk_id: the candidate's `window`, returned with its offsets")

    def target(self) -> dict[str, Any]:
        return self.model_dump(include=set(Locator.model_fields), exclude_none=True)


class ReadArguments(Request, Locator):  # one locator, and the knowledge-base filter
    kb_ids: Names | None = Field(None, description=_KB_FILTER)


Targets = Annotated[list[Locator], Field(min_length=1, max_length=MAX_READ_MANY, description=f"up to {MAX_READ_MANY} locators")]


class ReadManyArguments(Request):
    targets: Targets
    kb_ids: Names | None = Field(None, description=_KB_FILTER)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[Request]
    """The tool's arguments over MCP (and, with HTTP-only fields added, its HTTP request model)."""
    scope: tuple[str, ...] = (KB_IDS,)
    """The arguments that narrow the caller's scope: the model agent has none, its scope is the run's
    (a private chat limited to one article stays limited to it)."""

    def input_schema(self) -> dict[str, Any]:
        return self.arguments.model_json_schema()

    @cached_property
    def agent_arguments(self) -> type[Request]:
        """`arguments` without the `scope` fields, on the same bases: what the model agent may send."""
        fields: dict[str, Any] = {name: (info.annotation, info) for name, info in self.arguments.model_fields.items() if name not in self.scope}
        bases = cast("tuple[type[Request], ...]", self.arguments.__bases__)
        return create_model(self.arguments.__name__, __base__=bases, **fields)

    def function(self) -> dict[str, Any]:
        """The tool as an OpenAI function for the model agent."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.agent_arguments.model_json_schema()},
        }


SEARCH = ToolSpec(
    "knowledge_search",
    "Hybrid search: locators (chunk_id, page_key, node_key), titles, heading paths, snippets, routes and scores.",
    SearchArguments,
    scope=(KB_IDS, "article_id"),
)
OUTLINE = ToolSpec(
    "knowledge_outline",
    "An article's section tree (PageIndex nodes, or a light tree from chunk headings), with the article version.",
    OutlineRequest,
)
READ = ToolSpec(
    "knowledge_read",
    "Read one locator: exactly one of chunk_id, page_key, node_key, or article_id alone for the whole article.",
    ReadArguments,
)
READ_MANY = ToolSpec(
    "knowledge_read_many",
    "Read up to four locators at once; a locator that cannot be read is listed under `failures`.",
    ReadManyArguments,
)
TOOLS: tuple[ToolSpec, ...] = (SEARCH, OUTLINE, READ, READ_MANY)


# the replies of the tools' HTTP endpoints (`tool_calls.Http.response`)


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
