"""Model-layer protocols: what the knowledge build and the agent ask of a chat model and an embedder.

This module is the one piece of the model layer that serving imports: types only, no provider code,
no configuration. Providers are built by `models.providers` in the layer above serving (the CLI).

Each chat operation returns the *parsed JSON reply* of its contract, whether it came
from an OpenAI-compatible endpoint or from the deterministic offline model, so the normalisation and
fallback rules in `petrichor_pipeline.knowledge` treat both the same way. A failure raises `ModelError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np


class ModelError(Exception):
    """A model call failed for good (after retries): timeout, HTTP error, or a reply that is not the contract."""

    def __init__(self, op: str, reason: str):
        super().__init__(f"{op}: {reason}")
        self.op = op
        self.reason = reason


@dataclass(frozen=True)
class QuestionChunk:
    """One chunk as the question prompt names it: `<chunk id="{key}" heading="{A > B}">content</chunk>`."""

    key: str
    heading: str
    heading_path: tuple[str, ...]
    content: str


@dataclass(frozen=True)
class CandidateRequest:
    """Whole-document candidate extraction."""

    kb_name: str
    title: str
    document: str
    existing_pages: str = ""
    """The catalog of existing pages, one `- {pageKey} | {kind} | {title} | ...` line each."""


@dataclass(frozen=True)
class PageRequest:
    """Page generation for one batch of at most 4 candidates."""

    title: str
    document: str
    valid_pages: Sequence[dict[str, Any]]
    relations: Sequence[dict[str, Any]]
    requested: Sequence[dict[str, Any]]


@dataclass(frozen=True)
class TreeNodeText:
    position: int
    depth: int
    title: str
    content: str


@dataclass(frozen=True)
class EvidenceText:
    """A passage the agent has read; `evidence_id` is what a citation names."""

    evidence_id: str
    title: str
    heading_path: tuple[str, ...]
    content: str


@dataclass
class CallContext:
    """Who a call is for, so usage is accounted per build and per article; `guide` is the compile guide."""

    article_id: str = ""
    kb_id: str = ""
    guide: str = ""


class AnswerModel(Protocol):
    """What serving asks of a chat model: cited answers over evidence the agent has read."""

    fingerprint: str

    def answer(self, question: str, evidence: Sequence[EvidenceText], ctx: CallContext) -> dict[str, Any]:
        """Reply contract: {"answer": "text with [1] markers", "citations": [{"marker": 1, "evidence_id", "quote"}]}.

        Each quote must be a verbatim substring of that evidence's content.
        """
        ...


class ChatModel(Protocol):
    """The build's chat model: every knowledge-build operation (an endpoint model also answers: `AnswerModel`)."""

    fingerprint: str
    """Model id + prompt version: part of the key that decides whether derived data is stale."""

    def generate_questions(self, chunks: Sequence[QuestionChunk], ctx: CallContext) -> dict[str, Any]:
        """Reply contract: {"questions": {"chunk-001": ["q1", "q2", "q3"], ...}}."""
        ...

    def extract_candidates(self, req: CandidateRequest, ctx: CallContext) -> dict[str, Any]:
        """Reply contract: {"documentSummary", "entities": [...], "concepts": [...], "relations": [...]}."""
        ...

    def plan_catalog(self, candidates: Sequence[dict[str, Any]], existing_folders: Sequence[str], ctx: CallContext) -> dict[str, Any]:
        """Reply contract: {"assignments": [{"pageKey": "...", "path": ["一级", "二级"]}]}."""
        ...

    def generate_pages(self, req: PageRequest, ctx: CallContext) -> dict[str, Any]:
        """Reply contract: {"pages": [{"pageKey", "summary", "contentMd"}]}."""
        ...

    def summarize_tree(self, nodes: Sequence[TreeNodeText], ctx: CallContext) -> dict[str, Any]:
        """Reply contract: {"summaries": {"<position>": "summary"}}."""
        ...


@dataclass
class UsageRecord:
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

    def add(self, other: UsageRecord) -> None:
        self.calls += other.calls
        self.failures += other.failures
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.latency_s += other.latency_s


@dataclass
class UsageMeter:
    """Token usage, call counts and latency, totalled and per article (surfaced as Dagster metadata)."""

    total: UsageRecord = field(default_factory=UsageRecord)
    by_article: dict[str, UsageRecord] = field(default_factory=dict)
    by_op: dict[str, UsageRecord] = field(default_factory=dict)

    def record(self, op: str, article_id: str, rec: UsageRecord) -> None:
        self.total.add(rec)
        self.by_op.setdefault(op, UsageRecord()).add(rec)
        if article_id:
            self.by_article.setdefault(article_id, UsageRecord()).add(rec)


class Embedder(Protocol):
    model_id: str

    @property
    def dim(self) -> int: ...

    @property
    def fingerprint(self) -> str:
        """`model id : dimension : version` — a vector with another fingerprint is never searched or mixed."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised."""
        ...
