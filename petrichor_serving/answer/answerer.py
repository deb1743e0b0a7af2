"""`OfflineAnswerer`: answers that quote the evidence verbatim, with no network: serving's own answer model.

It answers whenever no endpoint chat model is configured, and is the agent's fallback when an endpoint
model's answer has no verified citation. The build's offline model (`OfflineChatModel`) does not answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from petrichor_core.contract.manifest import OFFLINE_CHAT_PREFIX
from petrichor_core.models.protocols import CallContext, EvidenceText, UsageMeter, UsageRecord
from petrichor_core.versions import OFFLINE_ANSWER_VERSION
from petrichor_serving.answer.answers import answer

ANSWER_OP = "agent.answer"
"""The usage op an answer is metered under (the endpoint model's answer prompt has the same name)."""
_lock = threading.Lock()


class OfflineAnswerer:
    """`AnswerModel` without a network: answers that quote the evidence verbatim.

    Calls are metered like endpoint calls (no tokens) when a meter is given.
    """

    fingerprint = f"{OFFLINE_CHAT_PREFIX}answer:{OFFLINE_ANSWER_VERSION}"

    def __init__(self, meter: UsageMeter | None = None):
        self._meter = meter

    def answer(self, question: str, evidence: Sequence[EvidenceText], ctx: CallContext) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return answer(question, evidence)
        finally:
            if self._meter is not None:
                with _lock:
                    self._meter.record(ANSWER_OP, ctx.article_id, UsageRecord(calls=1, latency_s=time.perf_counter() - started))


OFFLINE = OfflineAnswerer()
"""The one unmetered instance serving answers with."""
