"""What kind of answer a question asks for, and whether a passage holds one: the offline answerer's cue.

"多少 / how many" wants a number, "何时 / which year" a date, "哪里 / where" a place. A sentence that shares
the question's words but holds no answer of the asked kind (no number, no date) is usually the one beside
the point. Numbers and years the question itself names do not count as an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class AnswerType:
    name: str
    asked: re.Pattern[str]
    """Question wording that asks for this kind of answer."""
    held: re.Pattern[str]
    """Text that can be an answer of this kind."""


_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_CN_DIGITS = "一二三四五六七八九十百千万亿两〇零"

ANSWER_TYPES: tuple[AnswerType, ...] = (
    AnswerType(
        "time",
        re.compile(
            r"何时|什么时[候间]|哪一?年|哪个年代|何年|哪一?天|哪一?日|几月|几年|几号|哪个朝代|哪个世纪"
            r"|\bwhen\b|\b(?:what|which)\s+(?:year|date|day|month|decade|century)\b|\bin what year\b",
            re.I,
        ),
        re.compile(
            rf"\d{{1,4}}\s*[年月日]|[{_CN_DIGITS}]{{2,4}}年|世纪|年代|朝|\b1[0-9]{{3}}\b|\b20[0-9]{{2}}\b|\b(?:{_MONTHS})\b",
            re.I,
        ),
    ),
    AnswerType(
        "number",
        re.compile(
            r"多少|几[个种次位名条本部座人项家所只天岁倍卷届层级场首集张台辆架艘]|多[大高长远重久深宽厚]"
            r"|\bhow\s+(?:many|much|long|old|far|big|large|tall|high|often|fast)\b|\bwhat\s+(?:percentage|number|amount)\b|\bnumber of\b",
            re.I,
        ),
        re.compile(rf"\d+(?:[.,]\d+)*|[{_CN_DIGITS}]+[个种次位名条本部座人项家所只天岁倍卷届层级场首集张台辆架艘米里克元]|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|hundred|thousand|million|billion)\b", re.I),
    ),
    AnswerType(
        "place",
        re.compile(
            r"哪里|哪儿|何处|何地|在哪|什么地方|哪[个座一]?(?:国家|城市|地区|省|州|县|市|国)|哪国"
            r"|\bwhere\b|\b(?:what|which)\s+(?:country|city|state|region|place|town|province)\b",
            re.I,
        ),
        re.compile(r"位于|坐落|地处|分布|[省市县州国镇村岛洋洲区]|\b(?:in|at|near|from)\s+[A-Z]"),
    ),
)
"""Checked in order: "哪一年" asks for a time before "几" could make it a number."""

_DIGITS = re.compile(r"\d+")


def asked_type(question: str) -> AnswerType | None:
    """The kind of answer the question asks for, or None when its wording does not say."""
    return next((t for t in ANSWER_TYPES if t.asked.search(question)), None)


def holds_answer(kind: AnswerType, text: str, question: str) -> bool:
    """Whether `text` holds an answer of `kind` that the question does not already name."""
    named = set(_DIGITS.findall(question))
    for m in kind.held.finditer(text):
        digits = _DIGITS.findall(m.group(0))
        if not digits or any(d not in named for d in digits):
            return True
    return False
