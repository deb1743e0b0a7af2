"""The soft router: which kind of question this is, which plan suits it, and in which language to answer.

Rules, not a model: a question is classed by the words that shape it (Chinese and English). Whether it asks
for a section's outline depends on the knowledge base's headings, so the agent decides that over the snapshot
(`structure.asks_for_outline`, `as_structure`). The class only picks a plan and a budget — every plan may
still fall back to another (a structure question whose section cannot be found is answered as a fact
question), and the model agent keeps every tool.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from petrichor_pipeline.text.lang import Language, language_of

if TYPE_CHECKING:
    from petrichor_serving.agent.question import Question


class QuestionClass(str, Enum):
    DIRECT = "direct"
    FACT = "fact"
    STRUCTURE = "structure"
    CONCEPT = "concept"
    COMPARISON = "comparison"
    COMPLEX = "complex"


HINTS: dict[QuestionClass, str] = {
    QuestionClass.DIRECT: "no lookup needed: answer directly",
    QuestionClass.FACT: "search, read the best candidates, quote the sentence, list item or table row that answers",
    QuestionClass.STRUCTURE: "find the article and section by title, outline it, read the section, list its children in order",
    QuestionClass.CONCEPT: "search the wiki, read the page, follow its links to the source chunks",
    QuestionClass.COMPARISON: "one search per compared item, read each, answer side by side with each side cited",
    QuestionClass.COMPLEX: "split into sub-questions, answer each from what was read",
}

_DIRECT = re.compile(r"^\s*(hi|hello|hey|thanks?|thank you|你好|您好|谢谢|多谢|嗨)[\s!！。.?？]*$", re.I)
_COMPARISON = re.compile(
    r"(区别|不同|差异|差别|对比|比较|相比|异同|\bvs\.?\b|\bversus\b|difference|differ|compare|comparison|contrast)", re.I
)
_CONCEPT = re.compile(r"(什么是|是什么意思|的概念|的含义|的原理|如何工作|怎么工作|^\s*(what is|what are|explain|define)\b|\bhow does .+ work\b)", re.I)
_QUESTION_MARKS = re.compile(r"[?？]")

ZH_FUNCTION_WORDS = re.compile(r"(的|了|吗|呢|是|在|和|与|如何|怎么|怎样|什么|哪些|哪个|为什么|需要|可以|多少|几)")
"""A question with Chinese function words is asked in Chinese, however much Latin it names (`Kubernetes`)."""


@dataclass(frozen=True)
class Route:
    kind: QuestionClass
    hint: str
    language: Language
    items: tuple[str, ...] = ()
    """The compared items of a comparison question (two or more), else ()."""
    question: Question | None = None
    """The question's record (`question.parse`), read by the plans and the gate."""


def answer_language(question: str) -> Language:
    """The language to answer in: Chinese whenever the question uses Chinese function words.

    `language_of` weighs Han against Latin letters (it feeds build outputs and stays as it is), so a
    question like "如何配置 Kubernetes 的 Operator" would read as English; the function words decide here.
    """
    if ZH_FUNCTION_WORDS.search(question):
        return "zh"
    return language_of(question)


_ZH_PAIR = re.compile(r"^(?:请问)?(?P<a>.+?)(?:和|与|跟|同|及|还是|、)(?P<b>.+?)(?:之间)?(?:的|有|在|相比|比较|对比|哪)")
_EN_BETWEEN = re.compile(r"between (?:the )?(?P<a>.+?) and (?:the )?(?P<b>.+?)(?:[?.!]|$| in | for | when )", re.I)
_EN_COMPARE = re.compile(r"(?:compare|comparing|contrast) (?:the )?(?P<a>.+?) (?:and|with|to|vs\.?|versus) (?:the )?(?P<b>.+?)(?:[?.!]|$| in | for )", re.I)
_EN_DIFFER = re.compile(r"(?:how )?(?:does|do|is|are) (?:the )?(?P<a>.+?) (?:differ from|compare (?:to|with)|different from) (?:the )?(?P<b>.+?)(?:[?.!]|$)", re.I)
_EN_VS = re.compile(r"(?P<a>[\w .\-]+?)\s+(?:vs\.?|versus)\s+(?P<b>[\w .\-]+)", re.I)


def compared_items(question: str) -> tuple[str, ...]:
    """The two things a comparison question names, or () when no pattern finds them."""
    q = question.strip()
    for pattern in (_EN_BETWEEN, _EN_COMPARE, _EN_DIFFER, _EN_VS, _ZH_PAIR):
        m = pattern.search(q)
        if m:
            items = tuple(s.strip(" ，,。？?“”\"'《》") for s in (m.group("a"), m.group("b")))
            if all(items):
                return items
    return ()


OUTLINE_CLASSES = frozenset({QuestionClass.FACT, QuestionClass.CONCEPT})
"""The classes a question may have before the headings show that it asks for a section's outline."""


def as_structure(route: Route) -> Route:
    return Route(QuestionClass.STRUCTURE, HINTS[QuestionClass.STRUCTURE], route.language, question=route.question)


def question_class(q: str) -> tuple[QuestionClass, tuple[str, ...]]:
    """The class the question's wording gives it, and a comparison's compared items."""
    if not q or _DIRECT.match(q):
        kind = QuestionClass.DIRECT
    elif _COMPARISON.search(q) and compared_items(q):
        kind = QuestionClass.COMPARISON
    elif len(_QUESTION_MARKS.findall(q)) >= 2:
        kind = QuestionClass.COMPLEX
    elif _CONCEPT.search(q):
        kind = QuestionClass.CONCEPT
    else:
        kind = QuestionClass.FACT
    return kind, (compared_items(q) if kind is QuestionClass.COMPARISON else ())


def classify(question: str | Question) -> Route:
    """The route of a question, read into its record first when given as text."""
    from petrichor_serving.agent.question import parse  # the record is built on this module's classes

    record = parse(question) if isinstance(question, str) else question
    return Route(record.intent, HINTS[record.intent], record.language, record.items, record)
