"""The agent's entry point: route the question, run a plan within its budget, check the citations.

With a tool-calling chat model configured, the model chooses the tools (`model_agent`); otherwise — and
whenever the model's answer has no verified citation — the offline plans answer (`offline`). Either way
only what Read returned is evidence, every quote is checked verbatim against it and mapped to offsets in
the article version (`citations`), and the run is kept in the trace store for its principal. A follow-up
question is searched with the previous turn's subject (`followup`) on both paths.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from petrichor_core.models.protocols import AnswerModel
from petrichor_serving.agent import citations, followup, offline, structure, tools
from petrichor_serving.agent.budget import budget_for
from petrichor_serving.agent.router import OUTLINE_CLASSES, Route, as_structure, classify
from petrichor_serving.agent.runtime import Run
from petrichor_serving.agent.trace import StopReason, TraceStore
from petrichor_serving.answer.answerer import OFFLINE
from petrichor_serving.recall.access import Scope
from petrichor_serving.snapshot import Snapshot


def uses_tools(chat: AnswerModel | None) -> bool:
    """Whether the chat model can drive the tool loop (an endpoint model, not the offline answerer)."""
    return chat is not None and callable(getattr(chat, "complete_with_tools", None))


def _route(snap: Snapshot, scope: Scope, question: str) -> Route:
    """The question's class; a fact or concept question made of one section's words and words about
    documents asks for that section's outline (`structure.asks_for_outline`)."""
    route = classify(question)
    if route.kind in OUTLINE_CLASSES and structure.asks_for_outline(snap, question, structure.scope_articles(snap, scope), route.language):
        return as_structure(route)
    return route


def answer(
    snap: Snapshot,
    question: str,
    scope: Scope,
    *,
    chat: AnswerModel | None = None,
    embedder: Any = None,
    history: Sequence[dict[str, str]] = (),
    public: bool = False,
    traces: TraceStore | None = None,
    owner: str = "local",
) -> dict[str, Any]:
    """The answer object: `{answer, citations, evidence, trace_id, snapshot_version, stop_reason, trace}`.

    Evidence is quoted without a network by `chat` when it is an answer model that calls no tools, else
    by serving's offline answerer (`petrichor_serving.answer`): with no `chat`, and as the fallback of a
    tool-calling model."""
    question = (question or "").strip()
    if not question:
        raise tools.ToolError("question must be a non-empty string")
    started = time.perf_counter()
    route = _route(snap, scope, question)
    extractor = chat if chat is not None and not uses_tools(chat) else OFFLINE
    follow = followup.resolve(snap, scope, question, history)
    run = Run(snap, scope, route, budget_for(route.kind, public=public), embedder, extractor, prefer=follow.prefer if follow else ())
    if follow is not None:
        run.trace.notes.append(
            f"follow-up ({follow.reason}): searched with {', '.join(follow.terms)}; {len(follow.prefer)} chunk(s) of the previous answer read first"
        )
    query = follow.query if follow else question
    if uses_tools(chat):
        from petrichor_serving.agent.model_agent import model_plan

        draft = model_plan(run, question, chat, history, query=query)
    else:
        draft = offline.plan(run, query)
    checked = citations.check(snap, run.evidence, draft.cited)
    run.trace.dropped_citations.extend(checked.dropped)
    text, cites = citations.renumber(draft.text, checked.citations)
    stop = draft.stop_reason
    if draft.cited and not cites and stop is StopReason.ANSWERED:
        # an answer whose every quote failed the check is not a sourced answer
        fallback = offline.nothing_found(run, question)
        text, stop = fallback.text, fallback.stop_reason
    run.trace.stop_reason = stop.value
    run.trace.cites = sorted({(c["article_id"], c["article_version"]) for c in cites})
    run.trace.total_ms = round((time.perf_counter() - started) * 1000, 2)
    if traces is not None:
        traces.put(owner, run.trace)
    return {
        "answer": text,
        "citations": cites,
        "evidence": run.evidence.entries(),
        "trace_id": run.trace.trace_id,
        "snapshot_version": snap.version,
        "stop_reason": stop.value,
        "trace": run.trace.to_json(),
    }
