"""The soft router: which plan suits a question, with what budget hint, and in which language to answer.

The question is read once into its record (`question.parse`: its class from the words that shape it, in
Chinese and English, its language, a comparison's items); the route is the record's class with the plan's
hint. Whether it asks for a section's outline depends on the knowledge base's headings, so the agent decides
that over the snapshot (`structure.asks_for_outline`, `as_structure`). The class only picks a plan and a
budget — every plan may still fall back to another (a structure question whose section cannot be found is
answered as a fact question), and the model agent keeps every tool.
"""

from __future__ import annotations

from dataclasses import dataclass

from petrichor_core.text.lang import Language
from petrichor_serving.agent.question import Question, QuestionClass, answer_language, compared_items, parse

__all__ = ["HINTS", "OUTLINE_CLASSES", "QuestionClass", "Route", "answer_language", "as_structure", "classify", "compared_items"]

HINTS: dict[QuestionClass, str] = {
    QuestionClass.DIRECT: "no lookup needed: answer directly",
    QuestionClass.FACT: "search, read the best candidates, quote the sentence, list item or table row that answers",
    QuestionClass.STRUCTURE: "find the article and section by title, outline it, read the section, list its children in order",
    QuestionClass.CONCEPT: "search the wiki, read the page, follow its links to the source chunks",
    QuestionClass.COMPARISON: "one search per compared item, read each, answer side by side with each side cited",
    QuestionClass.COMPLEX: "split into sub-questions, answer each from what was read",
}


@dataclass(frozen=True)
class Route:
    kind: QuestionClass
    hint: str
    language: Language
    items: tuple[str, ...] = ()
    """The compared items of a comparison question (two or more), else ()."""
    question: Question | None = None
    """The question's record (`question.parse`), read by the plans and the gate."""


OUTLINE_CLASSES = frozenset({QuestionClass.FACT, QuestionClass.CONCEPT})
"""The classes a question may have before the headings show that it asks for a section's outline."""


def as_structure(route: Route) -> Route:
    return Route(QuestionClass.STRUCTURE, HINTS[QuestionClass.STRUCTURE], route.language, question=route.question)


def classify(question: str | Question) -> Route:
    """The route of a question, read into its record first when given as text."""
    record = parse(question) if isinstance(question, str) else question
    return Route(record.intent, HINTS[record.intent], record.language, record.items, record)
