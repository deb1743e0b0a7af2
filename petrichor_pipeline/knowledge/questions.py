"""Recommended questions: three likely user questions per chunk, used only as retrieval aliases.

A question never becomes evidence; a hit maps back to its chunk. So a failure here must not fail the
build: any chunk without model questions gets template questions and the build records why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from petrichor_core.models.protocols import CallContext, ChatModel, ModelError, QuestionChunk
from petrichor_core.text.lang.texts import TEMPLATE_QUESTIONS_EN, TEMPLATE_QUESTIONS_ZH
from petrichor_pipeline.knowledge.batching import batch_by_budget, map_ordered
from petrichor_pipeline.knowledge.chunk_view import ChunkLike, heading_label
from petrichor_pipeline.knowledge.strings import capped_warnings, is_cjk, normalize_string_list

BATCH_MAX_CHARS = 4000
BATCH_MAX_ITEMS = 4
QUESTIONS_PER_CHUNK = 3

_LATIN_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class QuestionsResult:
    questions: dict[str, tuple[str, ...]]
    """chunk key -> exactly three questions, for every chunk given."""
    warnings: tuple[str, ...]
    model_calls: int
    fallback: frozenset[str] = frozenset()
    """The keys of chunks given template questions because their call failed or the reply left them out:
    what a later build asks the model again."""


def template_questions(heading: str, text: str = "") -> list[str]:
    """The spec's template questions about `heading` (Chinese, with the single space after the heading).

    When `heading` plus `text` is mostly non-CJK (more Latin words than CJK characters, each CJK
    character counting as one word) the English equivalents are used, so an English article does not get
    Chinese questions in its retrieval index.
    """
    sample = heading + "\n" + text
    cjk = sum(1 for ch in sample if is_cjk(ch))
    templates = TEMPLATE_QUESTIONS_EN if len(_LATIN_WORD.findall(sample)) > cjk else TEMPLATE_QUESTIONS_ZH
    return [t.format(h=heading) for t in templates]


def normalize_questions(values: object, heading: str, text: str = "") -> tuple[str, ...]:
    """`normalizeRecommendedQuestions`: the model's first three distinct questions, topped up with templates."""
    out = normalize_string_list(values, QUESTIONS_PER_CHUNK)
    for template in template_questions(heading, text):
        if len(out) >= QUESTIONS_PER_CHUNK:
            break
        if template not in out:
            out.append(template)
    return tuple(out[:QUESTIONS_PER_CHUNK])


@dataclass(frozen=True)
class _BatchOutcome:
    questions: dict[str, tuple[str, ...]]
    missing: int
    warning: str
    fallback: tuple[str, ...] = ()


def generate_questions(chunks: Sequence[ChunkLike], model: ChatModel, ctx: CallContext, *, concurrency: int = 8) -> QuestionsResult:
    """Questions for every chunk: batches of ≤ 4 chunks and ≤ 4000 code points, one model call each.

    A failed call or a reply without a `questions` map gives its whole batch template questions and a
    warning; chunks the reply leaves out get templates and one summary warning
    `"{n} chunk(s) got no model questions, template questions used"` (n counted over the whole article). Warnings are
    deduplicated and capped at 5. Batches run with at most `concurrency` calls in flight.
    """
    batches = batch_by_budget(chunks, lambda c: len(c.content), BATCH_MAX_CHARS, BATCH_MAX_ITEMS)

    def run(batch: list[ChunkLike]) -> _BatchOutcome:
        request = [QuestionChunk(c.key, c.heading, tuple(c.heading_path), c.content) for c in batch]
        try:
            reply = model.generate_questions(request, ctx)
        except ModelError as exc:
            return _templates_for(batch, f"question generation failed, template questions used: {exc.reason}")
        by_key = reply.get("questions") if isinstance(reply, Mapping) else None
        if not isinstance(by_key, Mapping):
            return _templates_for(batch, "question generation reply is not valid JSON, template questions used")
        questions: dict[str, tuple[str, ...]] = {}
        missing: list[str] = []
        for c in batch:
            values: Any = by_key.get(c.key)
            if not isinstance(values, (list, tuple)):
                missing.append(c.key)
                values = None
            questions[c.key] = normalize_questions(values, heading_label(c), c.content)
        return _BatchOutcome(questions, len(missing), "", tuple(missing))

    outcomes = map_ordered(run, batches, concurrency)
    questions: dict[str, tuple[str, ...]] = {}
    for outcome in outcomes:
        questions.update(outcome.questions)
    warnings = [o.warning for o in outcomes]
    missing = sum(o.missing for o in outcomes)
    if missing:
        warnings.append(f"{missing} chunk(s) got no model questions, template questions used")
    fallback = frozenset(key for o in outcomes for key in o.fallback)
    return QuestionsResult(questions, capped_warnings(warnings), len(batches), fallback)


def _templates_for(batch: Sequence[ChunkLike], warning: str) -> _BatchOutcome:
    questions = {c.key: normalize_questions(None, heading_label(c), c.content) for c in batch}
    return _BatchOutcome(questions, 0, warning, tuple(questions))
