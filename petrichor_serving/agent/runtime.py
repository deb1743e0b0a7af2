"""One agent run: the tools bound to the caller's scope, metered against the budget and traced.

Plans (offline or model-driven) call the tools only through `Run`, so every call counts against the
class budget, lands in the trace with its arguments, returned locators and time, and every Read result
enters the run's `Evidence` (within the evidence-character budget). Scope comes from the caller and
cannot be changed by a plan or a model: the tools take it from here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from petrichor_core.models.protocols import AnswerModel
from petrichor_serving.agent import tools
from petrichor_serving.agent.budget import Budget, Meter
from petrichor_serving.agent.evidence import Evidence, locator_of
from petrichor_serving.agent.router import Route
from petrichor_serving.agent.trace import Trace
from petrichor_serving.recall.access import Scope
from petrichor_serving.recall.config import DEFAULT_CONFIG, RecallConfig
from petrichor_serving.snapshot import Snapshot
from petrichor_serving.toolspec import MAX_OUTLINE_NODES


def _hit_locator(c: dict[str, Any]) -> str:
    return c.get("chunk_id") or c.get("page_key") or c.get("node_key") or ""


@dataclass
class Run:
    snap: Snapshot
    scope: Scope
    route: Route
    budget: Budget
    embedder: Any = None
    extractor: AnswerModel | None = None
    """What quotes answers from evidence offline (the offline answerer), for the plans and the model's fallback."""
    prefer: tuple[str, ...] = ()
    """Chunk ids to read first: what the previous answer of a follow-up question quoted (`followup`)."""
    trace: Trace = field(init=False)
    meter: Meter = field(init=False)
    evidence: Evidence = field(default_factory=Evidence)

    def __post_init__(self) -> None:
        self.trace = Trace(snapshot_version=self.snap.version, question_class=self.route.kind.value, hint=self.route.hint)
        self.meter = Meter(self.budget)

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        sub_queries: Sequence[str] | None = None,
        article_id: str | None = None,
        config: RecallConfig = DEFAULT_CONFIG,
    ) -> list[dict[str, Any]]:
        """The search tool's candidates; `limit` defaults to the search's own list length (`RecallConfig.limit`),
        so the agent reads from the list the evaluation measures."""
        limit = limit or config.limit
        self.meter.take_tool_call()
        started = time.perf_counter()
        scope = self.scope if article_id is None else replace(self.scope, article_id=article_id)
        args: dict[str, Any] = {"query": query, "limit": limit}
        if sub_queries:
            args["sub_queries"] = list(sub_queries)
        if article_id:
            args["article_id"] = article_id
        try:
            found = tools.search(self.snap, scope, query, embedder=self.embedder, limit=limit, sub_queries=sub_queries, config=config)
        except tools.ToolError as exc:
            self.trace.record("search", args, started, error=str(exc))
            raise
        cands = found["candidates"]
        self.trace.record("search", args, started, locators=[_hit_locator(c) for c in cands])
        return cands

    def outline(self, article_id: str, *, max_nodes: int = MAX_OUTLINE_NODES) -> dict[str, Any]:
        self.meter.take_tool_call()
        started = time.perf_counter()
        try:
            tree = tools.outline(self.snap, self.scope, article_id, max_nodes=max_nodes)
        except tools.ToolError as exc:
            self.trace.record("outline", {"article_id": article_id}, started, error=str(exc))
            raise
        self.trace.record(
            "outline", {"article_id": article_id}, started, locators=[n.get("node_key") or n.get("chunk_id") or "" for n in tree["nodes"]][:50]
        )
        return tree

    def read_many(self, targets: Sequence[dict[str, Any]]) -> list[str]:
        """Read up to `budget.max_reads` targets; the evidence ids of what was read (new or already held)."""
        targets = list(targets)[: self.budget.max_reads]
        held = [self._held(t) for t in targets]  # evidence named by its label ("e3"): nothing to read
        targets = [t for t, h in zip(targets, held) if not h]
        if not targets:
            return list(dict.fromkeys(h for h in held if h))
        self.meter.take_tool_call()
        started = time.perf_counter()
        got = tools.read_many(self.snap, self.scope, targets)
        ids = []
        for item in got["results"]:
            eid = self.evidence.add(item, self.meter.evidence_room())
            if eid:
                ids.append(eid)
        self.meter.evidence_chars = self.evidence.chars
        errors = "; ".join(f["error"] for f in got["failures"]) or None
        self.trace.record(
            "read_many" if len(targets) > 1 else "read", {"targets": targets}, started, locators=[locator_of(i) for i in got["results"]], error=errors
        )
        return list(dict.fromkeys([*(h for h in held if h), *ids]))

    def _held(self, target: dict[str, Any]) -> str | None:
        """The evidence id a target names in place of a locator, when that evidence is already held: small
        models read "e3" back as a chunk or article id after seeing it as a passage's label."""
        named = [v for k, v in target.items() if k != "kind" and isinstance(v, str)]
        return next((v for v in named if v in self.evidence.items), None)
