"""Which vector tables search reads, declared once: the build embeds exactly these, and serving's routes search them.

Embedding is most of a cold build, so a table no route searches is never embedded. The chunk and window
vectors are read by default-on routes. The question vectors are read only by the question routes, and those
run only over questions a configured model wrote: the offline model's questions are near-copies of chunk
sentences, and with them every evaluation set lost recall (docs/evaluation.md). `question_routes="always"`
runs them whoever wrote the questions: a search option in serving, and the build setting
(`PETRICHOR_QUESTION_ROUTES`) that embeds offline questions for such searches.
"""

from __future__ import annotations

from petrichor_core.contract.manifest import generated_by_model
from petrichor_core.contract.schemas import VECTOR_TABLES

QUESTION_ROUTE_MODES = ("model", "always")
"""`model`: the question routes run only over a configured model's questions; `always`: over any."""

QUESTION_VECTORS = "question_vectors"
"""The vector table only the question routes read."""

ALWAYS_SEARCHED = frozenset(VECTOR_TABLES) - {QUESTION_VECTORS}
"""Vector tables a default-on route reads whatever the snapshot holds: chunk and window vectors."""


def check_question_routes(mode: str) -> str:
    if mode not in QUESTION_ROUTE_MODES:
        raise ValueError(f"question routes must be one of {', '.join(QUESTION_ROUTE_MODES)}, not {mode!r}")
    return mode


def question_routes_run(mode: str, model_questions: bool) -> bool:
    """Whether the question routes search the generated questions. `model_questions`: a configured model
    wrote them (`manifest.generated_by_model` of the chat fingerprint)."""
    return check_question_routes(mode) == "always" or model_questions


def searched_vector_tables(mode: str, chat_fingerprint: str | None) -> frozenset[str]:
    """The vector tables (`schemas.VECTOR_TABLES` names) a search reads over a snapshot whose questions the
    chat model of `chat_fingerprint` wrote: what a build embeds."""
    if question_routes_run(mode, generated_by_model(chat_fingerprint)):
        return frozenset(VECTOR_TABLES)
    return ALWAYS_SEARCHED
