"""Budgets per question class and the run's meter against them.

The classes map onto the reference's complexities: direct → direct, fact → simple, structure, concept and
comparison → multi_step, complex → complex. Evidence characters bound what Read may add to the evidence
(the reference gives the evidence 30 % of a 100k-token context; we count characters, about 3 per token
for English and 1 for Chinese, and stay well under).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from petrichor_serving.agent.router import QuestionClass

PUBLIC_MAX_TOOL_CALLS = 8
"""`/api/public/qa/chat` runs at most 8 tool steps, whatever the class."""
MAX_NO_PROGRESS = 3
"""Model turns in a row whose every tool call repeats an earlier identical call (same tool, same normalised
arguments) before the run stops. A call that re-finds evidence the run already holds is not a repeat."""


@dataclass(frozen=True)
class Budget:
    max_iterations: int
    max_tool_calls: int
    wall_time_s: float
    max_evidence_chars: int
    max_reads: int = 4
    """Targets per read_many call."""


BUDGETS: dict[QuestionClass, Budget] = {
    QuestionClass.DIRECT: Budget(1, 0, 60.0, 0),
    QuestionClass.FACT: Budget(4, 4, 120.0, 16_000),
    QuestionClass.STRUCTURE: Budget(12, 14, 240.0, 40_000),
    QuestionClass.CONCEPT: Budget(12, 14, 240.0, 40_000),
    QuestionClass.COMPARISON: Budget(12, 14, 240.0, 40_000),
    QuestionClass.COMPLEX: Budget(24, 32, 420.0, 80_000),
}


def budget_for(kind: QuestionClass, *, public: bool = False) -> Budget:
    b = BUDGETS[kind]
    if public:
        b = replace(b, max_tool_calls=min(b.max_tool_calls, PUBLIC_MAX_TOOL_CALLS))
    if kind is QuestionClass.DIRECT:
        # a direct question still gets one search: "direct" is a guess, and a wrong guess must not answer blind
        b = replace(b, max_tool_calls=2, max_evidence_chars=8_000)
    return b


class BudgetExceeded(Exception):
    """Raised by the meter when a tool call would pass the budget; the run stops with `budget`."""


@dataclass
class Meter:
    budget: Budget
    started: float = field(default_factory=time.perf_counter)
    tool_calls: int = 0
    iterations: int = 0
    evidence_chars: int = 0

    def elapsed_s(self) -> float:
        return time.perf_counter() - self.started

    def take_tool_call(self) -> None:
        if self.tool_calls >= self.budget.max_tool_calls:
            raise BudgetExceeded(f"tool calls: {self.budget.max_tool_calls}")
        if self.elapsed_s() > self.budget.wall_time_s:
            raise BudgetExceeded(f"wall time: {self.budget.wall_time_s:.0f}s")
        self.tool_calls += 1

    def take_iteration(self) -> None:
        if self.iterations >= self.budget.max_iterations:
            raise BudgetExceeded(f"iterations: {self.budget.max_iterations}")
        self.iterations += 1

    def evidence_room(self) -> int:
        return max(0, self.budget.max_evidence_chars - self.evidence_chars)
