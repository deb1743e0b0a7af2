"""`OfflineAnswerer`: the offline model's answering half, importable without the build-side modules.

Serving holds this; the build holds `OfflineChatModel`, which adds every knowledge-build operation.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

from petrichor_pipeline.contract.manifest import OFFLINE_CHAT_PREFIX
from petrichor_pipeline.models.offline.answers import answer
from petrichor_pipeline.models.prompts import ANSWER, PROMPT_VERSION
from petrichor_pipeline.models.protocols import CallContext, EvidenceText, UsageMeter, UsageRecord
from petrichor_pipeline.models.usage import record_usage

OFFLINE_VERSION = 4
"""Bumped whenever the offline model's output changes, so derived data built with it goes stale."""


class OfflineAnswerer:
    """`AnswerModel` without a network: answers that quote the evidence verbatim.

    Calls are metered like endpoint calls (no tokens), so build summaries count them the same way.
    """

    fingerprint = f"{OFFLINE_CHAT_PREFIX}{OFFLINE_VERSION}:{PROMPT_VERSION}"

    def __init__(self, meter: UsageMeter | None = None):
        self._meter = meter

    def answer(self, question: str, evidence: Sequence[EvidenceText], ctx: CallContext) -> dict[str, Any]:
        return self._timed(ANSWER.op, ctx, lambda: answer(question, evidence))

    def _timed(self, op: str, ctx: CallContext, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return run()
        finally:
            record_usage(self._meter, op, ctx.article_id, UsageRecord(calls=1, latency_s=time.perf_counter() - started))
