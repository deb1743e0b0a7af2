"""Calling an OpenAI-compatible endpoint: one concurrency limit per run, bounded retries, usage.

The `openai` client's own retries are switched off (`max_retries=0`) so that every attempt passes
through here: it is counted, timed, held to the run's limit, and retried only when retrying can help
(429, 5xx, timeouts, dropped connections), with exponential backoff and jitter.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import openai

from petrichor_core.config import BuildLimits, ModelEndpoint
from petrichor_core.models.protocols import ModelError, UsageMeter, UsageRecord
from petrichor_core.models.usage import RunMeter, record_usage

R = TypeVar("R")
T = TypeVar("T")


def model_slots(limits: BuildLimits, meter: UsageMeter | None) -> threading.BoundedSemaphore:
    """The semaphore a client's requests wait on (spec: a global model semaphore).

    A run's clients share the slots on its `RunMeter`, sized from that run's settings, so several
    clients cannot multiply the limit; a client outside a run gets slots of its own.
    """
    if isinstance(meter, RunMeter):
        return meter.slots
    return threading.BoundedSemaphore(max(1, limits.model_concurrency))


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    """Attempts after the first."""
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0

    def delay(self, retry: int, retry_after_s: float | None = None) -> float:
        """Exponential backoff with equal jitter; a server's Retry-After wins when it is longer."""
        ceiling = min(self.backoff_max_s, self.backoff_base_s * (2**retry))
        wait = ceiling / 2 + random.uniform(0, ceiling / 2)
        if retry_after_s is not None:
            wait = max(wait, min(retry_after_s, self.backoff_max_s))
        return wait


_VALIDATION = re.compile(r"validation error", re.IGNORECASE)


def reports_invalid_request(error: Exception) -> bool:
    """A 5xx whose message is a request validation error (llama-cpp-python's server answers a field it cannot
    validate so): the same request fails the same way, so it is a refusal, not a transient failure."""
    return isinstance(error, openai.APIStatusError) and error.status_code >= 500 and bool(_VALIDATION.search(f"{error.message} {error.body}"))


def is_retryable(error: Exception) -> bool:
    if isinstance(error, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError, ValueError)):
        return True
    return isinstance(error, openai.APIStatusError) and error.status_code >= 500 and not reports_invalid_request(error)


def describe(error: Exception) -> str:
    if isinstance(error, openai.APITimeoutError):
        return "timed out"
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {str(error.message)[:200]}"
    if isinstance(error, openai.APIConnectionError):
        return f"connection failed: {error.__cause__ or error}"
    if isinstance(error, ValueError):
        return f"reply body is not JSON ({type(error).__name__})"
    return f"{type(error).__name__}: {error}"


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    raw = response.headers.get("retry-after") if response is not None else None
    try:
        return float(raw) if raw else None
    except ValueError:
        return None


class EndpointClient:
    """An `openai.OpenAI` client plus the retry, concurrency and accounting rules above."""

    def __init__(
        self,
        endpoint: ModelEndpoint,
        limits: BuildLimits,
        meter: UsageMeter | None,
        backoff_base_s: float = 1.0,
    ):
        self.endpoint = endpoint
        self.client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key or "unused",
            timeout=endpoint.timeout_s,
            max_retries=0,
        )
        self.policy = RetryPolicy(max_retries=max(0, endpoint.max_retries), backoff_base_s=backoff_base_s)
        self._slots = model_slots(limits, meter)
        self._meter = meter

    def call(self, op: str, article_id: str, send: Callable[[openai.OpenAI], R], parse: Callable[[R], T]) -> T:
        """Run `send` until it succeeds or the retry budget is spent, then `parse` the reply.

        `parse` raises `ModelError` for a reply that arrived but breaks the contract; that counts as a
        failed call and is not retried (the same prompt would most likely fail the same way).
        """
        retry = 0
        while True:
            started = time.perf_counter()
            try:
                with self._slots:
                    reply = send(self.client)
            except (openai.OpenAIError, ValueError) as error:  # ValueError: a malformed or truncated reply body
                self._record(op, article_id, UsageRecord(calls=1, failures=1, latency_s=time.perf_counter() - started))
                if not is_retryable(error) or retry >= self.policy.max_retries:
                    attempts = f"{retry + 1} attempt" + ("s" if retry else "")
                    raise ModelError(op, f"{describe(error)} (after {attempts})") from error
                time.sleep(self.policy.delay(retry, _retry_after(error)))
                retry += 1
                continue
            usage = UsageRecord(calls=1, latency_s=time.perf_counter() - started, **_tokens(reply))
            try:
                result = parse(reply)
            except ModelError:
                usage.failures = 1
                raise
            finally:
                self._record(op, article_id, usage)
            return result

    def _record(self, op: str, article_id: str, rec: UsageRecord) -> None:
        record_usage(self._meter, op, article_id, rec)


def _tokens(reply: object) -> dict[str, int]:
    usage = getattr(reply, "usage", None)
    return {
        "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
    }
