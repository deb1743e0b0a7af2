"""One agent run: the tools bound to the caller's scope, metered against the budget and traced.

Plans (offline or model-driven) call the tools only through `Run`, so every call counts against the
class budget, lands in the trace with its arguments, returned locators and time, and every Read result
enters the run's `Evidence` (within the evidence-character budget). Scope comes from the caller and
cannot be changed by a plan or a model: the tools take it from here. `Run.call` calls any declared tool
(`tool_calls.TOOLS`), recording what its entry says; `Run.read_many` is how read tools' locators enter
the evidence.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from petrichor_core.models.protocols import AnswerModel
from petrichor_serving.agent.budget import Budget, Meter
from petrichor_serving.agent.evidence import Evidence
from petrichor_serving.agent.router import Route
from petrichor_serving.agent.trace import Trace
from petrichor_serving.errors import ToolError
from petrichor_serving.recall.access import Scope
from petrichor_serving.recall.config import DEFAULT_CONFIG, RecallConfig
from petrichor_serving.snapshot import Snapshot
from petrichor_serving.tool_calls import READ, READ_MANY, Tool, Within
from petrichor_serving.toolspec import ReadManyArguments, Request

A = TypeVar("A", bound=Request)


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

    def call(self, tool: Tool[A], arguments: A, *, config: RecallConfig = DEFAULT_CONFIG, step: str | None = None) -> dict[str, Any]:
        """`tool`'s reply to `arguments`, within the run's scope and budget; recorded in the trace (as `step`,
        default the tool's) with what the tool's entry says to record, a refusal (`ToolError`) too before it
        is raised. A search searches with `config` (a plan's, default the evaluated one)."""
        self.meter.take_tool_call()
        started = time.perf_counter()
        name, traced = step or tool.step, tool.traced(arguments)
        try:
            reply = tool.call(Within(self.snap, self._scope_for(tool, arguments), self.embedder, config), arguments)
        except ToolError as exc:
            self.trace.record(name, traced, started, error=str(exc))
            raise
        self.trace.record(name, traced, started, locators=tool.locators(reply), error=tool.error(reply))
        return reply

    def _scope_for(self, tool: Tool[Any], arguments: Any) -> Scope:
        """The run's scope, focused on one article where a plan names it (`article_id` among the tool's scope
        arguments, as search's): the model's arguments have no scope field, and nothing else narrows a run."""
        article_id = getattr(arguments, "article_id", None) if "article_id" in tool.spec.scope else None
        return self.scope if article_id is None else replace(self.scope, article_id=article_id)

    def read_many(self, targets: Sequence[dict[str, Any]]) -> list[str]:
        """Read up to `budget.max_reads` targets into the evidence, in one call of the batch read (recorded as
        a `read` when it reads one locator); the evidence ids of what was read (new or already held)."""
        targets = list(targets)[: self.budget.max_reads]
        held = [self._held(t) for t in targets]  # evidence named by its label ("e3"): nothing to read
        targets = [t for t, h in zip(targets, held) if not h]
        if not targets:
            return list(dict.fromkeys(h for h in held if h))
        batch = ReadManyArguments.model_validate({"targets": targets})
        got = self.call(READ_MANY, batch, step=READ.step if len(targets) == 1 else None)
        ids = []
        for item in got["results"]:
            eid = self.evidence.add(item, self.meter.evidence_room())
            if eid:
                ids.append(eid)
        self.meter.evidence_chars = self.evidence.chars
        return list(dict.fromkeys([*(h for h in held if h), *ids]))

    def _held(self, target: dict[str, Any]) -> str | None:
        """The evidence id a target names in place of a locator, when that evidence is already held: small
        models read "e3" back as a chunk or article id after seeing it as a passage's label."""
        named = [v for k, v in target.items() if k != "kind" and isinstance(v, str)]
        return next((v for v in named if v in self.evidence.items), None)
