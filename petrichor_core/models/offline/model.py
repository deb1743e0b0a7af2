"""`OfflineChatModel`: every `ChatModel` operation answered locally, deterministically, from the input text."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from petrichor_core.contract.manifest import OFFLINE_CHAT_PREFIX
from petrichor_core.models.offline import worker
from petrichor_core.models.offline.tree import node_summary
from petrichor_core.models.prompts import CANDIDATES, CATALOG, PAGES, QUESTIONS, TREE_SUMMARIES
from petrichor_core.models.protocols import CallContext, CandidateRequest, PageRequest, QuestionChunk, TreeNodeText, UsageMeter, UsageRecord
from petrichor_core.models.usage import record_usage
from petrichor_core.versions import CHAT_PROMPT_VERSION, OFFLINE_MODEL_VERSION


class OfflineChatModel:
    """`ChatModel` without a network: keyword and structure based, deterministic, grounded.

    Calls are metered like endpoint calls (no tokens), so build summaries count them the same way. It does
    not answer questions: serving's `OfflineAnswerer` (`petrichor_serving.answer`) does.
    """

    fingerprint = f"{OFFLINE_CHAT_PREFIX}{OFFLINE_MODEL_VERSION}:{CHAT_PROMPT_VERSION}"

    def __init__(self, meter: UsageMeter | None = None):
        self._meter = meter

    def generate_questions(self, chunks: Sequence[QuestionChunk], ctx: CallContext) -> dict[str, Any]:
        return self._timed(QUESTIONS.op, ctx, lambda: worker.run("questions", list(chunks)))

    def extract_candidates(self, req: CandidateRequest, ctx: CallContext) -> dict[str, Any]:
        return self._timed(CANDIDATES.op, ctx, lambda: worker.run("candidates", req))

    def plan_catalog(self, candidates: Sequence[dict[str, Any]], existing_folders: Sequence[str], ctx: CallContext) -> dict[str, Any]:
        return self._timed(CATALOG.op, ctx, lambda: worker.run("catalog", list(candidates), list(existing_folders)))

    def generate_pages(self, req: PageRequest, ctx: CallContext) -> dict[str, Any]:
        return self._timed(PAGES.op, ctx, lambda: worker.run("pages", req))

    def summarize_tree(self, nodes: Sequence[TreeNodeText], ctx: CallContext) -> dict[str, Any]:
        def summaries() -> dict[str, Any]:  # no word analysis: computed here, never waiting on the worker
            return {"summaries": {str(n.position): s for n in nodes if (s := node_summary(n))}}

        return self._timed(TREE_SUMMARIES.op, ctx, summaries)

    def _timed(self, op: str, ctx: CallContext, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return run()
        finally:
            record_usage(self._meter, op, ctx.article_id, UsageRecord(calls=1, latency_s=time.perf_counter() - started))
