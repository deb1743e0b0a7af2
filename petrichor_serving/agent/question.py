"""The question, read once: a typed record every part of the agent reads instead of re-tokenising the text.

`parse(text)` gives the language and script, the content words (each with the user's surface form, the key
passages are matched with and a weight), the asked answer kind, the constraints the question pins down —
years, dates, numbers, quantities with units, named entities and product names, quoted terms, each keeping
the user's words — and the structure intent: its class from the words that shape it (Chinese and English),
which the router turns into a plan. The answerability gate checks the
constraints against the cited unit (`unit_facts`, `check`): a question about 2021 is not answered by a
passage about 2020, one about 北京 not by one about 上海.

Numbers are compared by value, not by spelling: "第三艘" and "3艘", "二〇二一年" and "2021年", "1.4万" and
"14000" are the same. Names come from the taggers the project already runs (jieba's part-of-speech tags for
Han text, capitalised and mixed-case runs for Latin text); nothing here lists the words of any question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Literal

from petrichor_core.text.lang import Language, has_cjk, init_posseg, language_of
from petrichor_core.text.lang.numbers import (
    CURRENCY_UNITS,
    DATE,
    DATE_SHOWN_ZH,
    DOTTED_NUMBER,
    MAGNITUDE_CHARS,
    MAGNITUDES,
    MONTH_ABBREVIATIONS,
    NUMBER_WITH_UNIT,
    YEAR,
    YEAR_MARK,
    cn_number,
)
from petrichor_core.text.lang.question_words import (
    BETWEEN_EN,
    COMPARE_EN,
    COMPARISON_ASKED,
    CONCEPT_ASKED,
    DIFFER_EN,
    GREETING_OR_THANKS,
    MONEY_ASKED,
    PAIR_ZH,
    VERSION_ASKED,
    VS_EN,
    ZH_FUNCTION_WORDS,
)
from petrichor_core.text.lang.stopwords import CHINESE, ENGLISH, FUNCTION_WORDS
from petrichor_serving.agent.words import surface_words
from petrichor_serving.answer.answer_types import defined_term, is_yes_no, short_kind

ConstraintKind = Literal["year", "date", "number", "entity", "quoted"]
CONSTRAINT_KINDS: tuple[ConstraintKind, ...] = ("year", "date", "number", "entity", "quoted")

# ------------------------------------------------------------------------------------------ class


class QuestionClass(str, Enum):
    DIRECT = "direct"
    FACT = "fact"
    STRUCTURE = "structure"
    CONCEPT = "concept"
    COMPARISON = "comparison"
    COMPLEX = "complex"


_QUESTION_MARKS = re.compile(r"[?？]")


def answer_language(question: str) -> Language:
    """The language to answer in: Chinese whenever the question uses Chinese function words.

    `language_of` weighs Han against Latin letters (it feeds build outputs and stays as it is), so a
    question like "如何配置 Kubernetes 的 Operator" would read as English; the function words decide here.
    """
    if ZH_FUNCTION_WORDS.search(question):
        return "zh"
    return language_of(question)


def compared_items(question: str) -> tuple[str, ...]:
    """The two things a comparison question names, or () when no pattern finds them."""
    q = question.strip()
    for pattern in (BETWEEN_EN, COMPARE_EN, DIFFER_EN, VS_EN, PAIR_ZH):
        m = pattern.search(q)
        if m:
            items = tuple(s.strip(" ，,。？?“”\"'《》") for s in (m.group("a"), m.group("b")))
            if all(items):
                return items
    return ()


def question_class(q: str) -> tuple[QuestionClass, tuple[str, ...]]:
    """The class the question's wording gives it, and a comparison's compared items."""
    if not q or GREETING_OR_THANKS.match(q):
        kind = QuestionClass.DIRECT
    elif COMPARISON_ASKED.search(q) and compared_items(q):
        kind = QuestionClass.COMPARISON
    elif len(_QUESTION_MARKS.findall(q)) >= 2:
        kind = QuestionClass.COMPLEX
    elif CONCEPT_ASKED.search(q):
        kind = QuestionClass.CONCEPT
    else:
        kind = QuestionClass.FACT
    return kind, (compared_items(q) if kind is QuestionClass.COMPARISON else ())


# ------------------------------------------------------------------------------------------- numbers


_COUNTED_NOUN = re.compile(r"\s?([a-z][a-z-]{2,})\b")


@dataclass(frozen=True)
class Quantity:
    """A number found in text: its value (magnitudes applied), the unit or measure word after it, and its span."""

    value: float
    unit: str
    start: int
    end: int
    ordinal: bool = False


def _number_value(num: str) -> float | None:
    if num[0].isdigit():
        return float(num.replace(",", ""))
    return cn_number(num)


def quantities(text: str) -> list[Quantity]:
    """Every number in `text` with its unit ("1.4万人" → 14000 people, "第三艘" → 3, ordinal)."""
    out: list[Quantity] = []
    for m in NUMBER_WITH_UNIT.finditer(text):
        num = m.group("num")
        value = _number_value(num)
        if value is None or (not num[0].isdigit() and not (m.group("unit") or m.group("ord") or len(num) > 1)):
            continue  # a lone Han numeral without a measure word is a word ("一起", "万一"), not a number
        if not num[0].isdigit() and all(c in MAGNITUDE_CHARS for c in num):
            continue  # magnitudes without a digit: "百分之", "千万" are words
        mag = (m.group("mag") or "").lower()
        value *= MAGNITUDES.get(mag, 1.0)
        unit = (m.group("unit") or "").lower()
        end = m.end()
        if not unit and num[0].isdigit():  # "512 windows": an English count's noun is its unit
            noun = _COUNTED_NOUN.match(text, end)
            if noun and noun.group(1).lower() not in ENGLISH:
                unit, end = noun.group(1).lower(), noun.end()
        if m.group("cur"):
            unit = unit or m.group("cur")
        out.append(Quantity(value, unit, m.start(), end, bool(m.group("ord"))))
    return out


def years(text: str) -> set[int]:
    """The years `text` names (2021, 2021年, 二〇二一年)."""
    found: set[int] = set()
    for m in YEAR.finditer(text):
        found.add(int(m.group("y")) if m.group("y") else int(cn_number(m.group("cn")) or 0))
    return {y for y in found if y}


def dates(text: str) -> set[tuple[int, int]]:
    """The (month, day) pairs `text` names (1月5日, 2022-01-05, January 5, 5 Jan)."""
    found: set[tuple[int, int]] = set()
    for m in DATE.finditer(text):
        if m.group("m"):
            found.add((int(m.group("m")), int(m.group("d"))))
        elif m.group("im"):
            found.add((int(m.group("im")), int(m.group("id"))))
        else:
            month = (m.group("em") or m.group("em2")).lower()[:3]
            found.add((MONTH_ABBREVIATIONS.index(month) + 1, int(m.group("ed") or m.group("ed2"))))
    return {(mo, d) for mo, d in found if 1 <= mo <= 12 and 1 <= d <= 31}


# ------------------------------------------------------------------------------------------ names

_QUOTED = re.compile(
    r"《(?P<a>[^》]{1,40})》|「(?P<b>[^」]{1,40})」|“(?P<c>[^”]{1,40})”|\"(?P<d>[^\"\n]{1,60})\"|`(?P<e>[^`\n]{1,60})`|‘(?P<f>[^’]{1,40})’"
)
_NAME_FLAGS = ("nr", "ns", "nt", "nz", "eng")
"""jieba's tags of person, place, organisation and other proper names, and of Latin words inside Han text."""
_LATIN_NAME = re.compile(r"[A-Za-z][\w.+-]*[A-Za-z0-9+]|[A-Za-z]")
_CAPITALISED_RUN = re.compile(r"\b[A-Z][\w'’.+-]*(?:\s+(?:(?:of|the|de|and|&|for)\s+)?[A-Z0-9][\w'’.+-]*)*")
_QUESTION_OPENERS = frozenset(w.lower() for w in ENGLISH) | FUNCTION_WORDS
_LATIN_RUN_IN_HAN = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*(?:\s+[A-Za-z0-9][A-Za-z0-9_.+-]*)*")
"""A run of Latin words inside Han text ("iPhone SE 3", "Red Hat Developer Hub"): one name."""


def _is_name_token(word: str) -> bool:
    """A Latin word that names something by its shape: a capital past the first letter or a digit beside
    letters (iPhone, GDP, SE3, K8s, EMNLP2022)."""
    return bool(re.search(r"[A-Za-z]", word)) and bool(re.search(r"[A-Z0-9]", word[1:])) and word.lower() not in _QUESTION_OPENERS


def _han_names(text: str) -> list[tuple[str, int]]:
    """Proper names jieba tags in `text` (neighbouring name tokens merged), with their offsets."""
    out: list[tuple[str, int]] = []
    pos, run_start, run_end = 0, -1, -1
    for token in init_posseg().lcut(text):
        start, end = pos, pos + len(token.word)
        pos = end
        word = token.word.strip()
        named = token.flag.startswith(_NAME_FLAGS) and len(word) >= 2 and token.flag != "eng"
        if named:
            run_start = start if run_start < 0 or start != run_end else run_start
            run_end = end
            continue
        if run_start >= 0:
            out.append((text[run_start:run_end], run_start))
        run_start = run_end = -1
    if run_start >= 0:
        out.append((text[run_start:run_end], run_start))
    for m in _LATIN_RUN_IN_HAN.finditer(text):
        run = m.group(0).strip()
        if len(re.findall(r"[A-Za-z]", run)) >= 2 and run.lower() not in _QUESTION_OPENERS:
            out.append((run, m.start()))
    return out


def _latin_names(text: str) -> list[tuple[str, int]]:
    """Capitalised word runs past the question's opening word, and mixed-case or digit-bearing words."""
    out: list[tuple[str, int]] = []
    for m in _CAPITALISED_RUN.finditer(text):
        words = m.group(0).split()
        start = m.start()
        while words and words[0].lower() in _QUESTION_OPENERS:  # "What", "Is", "The" open the sentence
            start += len(words[0]) + 1
            words = words[1:]
        if not words:
            continue
        run = " ".join(words).rstrip(".")
        if start == 0 and len(words) == 1 and not _is_name_token(run):
            continue  # one capitalised word opening the question is the sentence's capital, not a name
        out.append((run, start))
    for m in _LATIN_NAME.finditer(text):
        if _is_name_token(m.group(0)) and not any(s <= m.start() < s + len(n) for n, s in out):
            out.append((m.group(0), m.start()))
    return out


# ------------------------------------------------------------------------------------------ the record


@dataclass(frozen=True)
class Word:
    """One content word of the question."""

    surface: str
    """As the user wrote it ("series", "配置")."""
    key: str
    """The form passages are matched with (`words.agent_stem` for Latin words: "seri")."""
    weight: float
    """Its share of what the question pins down before the knowledge base weighs it: a word inside a
    constraint (a name, a year, a quoted term) weighs 2, any other 1."""


@dataclass(frozen=True)
class Constraint:
    """Something the question pins down that the cited unit must also say."""

    kind: ConstraintKind
    surface: str
    """The user's own words for it ("2021年", "第三艘", "iPhone SE 3")."""
    value: float | tuple[int, int] | str
    """Normalised: a year or number's value, a date's (month, day), a name's case-folded text."""
    unit: str = ""
    """A number's unit or measure word, lower-cased ("" when none)."""


@dataclass(frozen=True)
class Question:
    text: str
    language: Language
    """The answer's language (`answer_language`)."""
    script: Literal["cjk", "latin"]
    words: tuple[Word, ...]
    asked: str | None
    """The asked answer kind: `answer_types.SPAN_KINDS`, refined to "money" or "version" where the wording says."""
    constraints: tuple[Constraint, ...]
    intent: QuestionClass
    """The question's class (a structure question is recognised later, over the knowledge base's headings)."""
    items: tuple[str, ...] = ()
    """A comparison's compared items."""
    yes_no: bool = False
    defined: str | None = None
    """The term a definition question asks about."""

    @property
    def keys(self) -> list[str]:
        """The content words' matching forms, in order."""
        return [w.key for w in self.words]

    @property
    def subject(self) -> tuple[str, ...]:
        """What a follow-up leans on: the content words that are no constraint, as the user wrote them."""
        pinned = " ".join(c.surface for c in self.constraints).lower()
        return tuple(w.surface for w in self.words if w.surface.lower() not in pinned)

    def of_kind(self, kind: ConstraintKind) -> tuple[Constraint, ...]:
        return tuple(c for c in self.constraints if c.kind == kind)

    @property
    def time_points(self) -> tuple[Constraint, ...]:
        """The points in time the question pins down, each by its most specific constraint: its dates when it
        names any (a year beside them only qualifies them: "2022年1月5日", "October 12, 2023"), else its years."""
        return self.of_kind("date") or self.of_kind("year")


def _asked(text: str) -> str | None:
    kind = short_kind(text)
    if VERSION_ASKED.search(text):
        return "version"
    if MONEY_ASKED.search(text) and kind in (None, "number"):
        return "money"
    return kind


def _constraints(text: str) -> list[Constraint]:
    found: list[tuple[int, Constraint]] = []
    taken: list[tuple[int, int]] = []  # spans already a constraint: a date's year is no separate number

    def overlaps(a: int, b: int) -> bool:
        return any(s < b and a < e for s, e in taken)

    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None).strip()
        if inner:
            found.append((m.start(), Constraint("quoted", inner, inner.casefold())))
    for m in DATE.finditer(text):
        parsed = dates(m.group(0))
        if parsed:
            month, day = next(iter(parsed))
            found.append((m.start(), Constraint("date", m.group(0).strip(), (month, day))))
            if m.group("y") or m.group("iy"):
                y = m.group("y") or m.group("iy")
                found.append((m.start(), Constraint("year", y, float(y))))
            taken.append(m.span())
    for m in YEAR.finditer(text):
        if overlaps(*m.span()):
            continue
        year = years(m.group(0))
        if year:
            end = m.end() + (1 if text[m.end() : m.end() + 1] == YEAR_MARK and m.group("y") else 0)
            found.append((m.start(), Constraint("year", text[m.start() : end], float(next(iter(year))))))
            taken.append((m.start(), end))
    names = _han_names(text) if has_cjk(text) else _latin_names(text)
    quoted = [c.value for _, c in found if c.kind == "quoted"]
    for name, start in names:
        value = name.casefold()
        if any(isinstance(q, str) and value in q for q in quoted) or re.fullmatch(r"[\d.,%\s]+", name):
            continue
        found.append((start, Constraint("entity", name, value)))
        taken.append((start, start + len(name)))
    for q in quantities(text):
        if overlaps(q.start, q.end):
            continue
        surface = text[q.start : q.end].strip()
        found.append((q.start, Constraint("number", surface, q.value, q.unit)))
        taken.append((q.start, q.end))
    seen: set[tuple[str, object, str]] = set()
    out: list[Constraint] = []
    for _, c in sorted(found, key=lambda p: p[0]):
        if (c.kind, c.value, c.unit) not in seen:
            seen.add((c.kind, c.value, c.unit))
            out.append(c)
    return out


def _words(text: str, constraints: list[Constraint]) -> tuple[Word, ...]:
    pinned = " ".join(c.surface for c in constraints).casefold()
    out: dict[str, Word] = {}
    folded = text.casefold()
    for surface, key in surface_words(text):
        if key in ENGLISH or key in CHINESE or surface.lower() in ENGLISH:
            continue
        found = re.search(rf"(?<![a-z0-9]){re.escape(surface.casefold())}(?![a-z0-9])", folded)
        if found and len(text) == len(folded):  # the tokenizer lower-cases: the user's capitals back
            surface = text[found.start() : found.end()]
        weight = 2.0 if surface.casefold() in pinned else 1.0
        out.setdefault(key, Word(surface, key, weight))
    return tuple(out.values())


@lru_cache(maxsize=4096)
def parse(text: str) -> Question:
    """The question's record. Deterministic, and cached: the same text is read once per process."""
    if not isinstance(text, str):
        raise TypeError(f"a question is a string, not {type(text).__name__}")
    q = text.strip()
    constraints = _constraints(q)
    intent, items = question_class(q)
    return Question(
        text=q,
        language=answer_language(q),
        script="cjk" if has_cjk(q) else "latin",
        words=_words(q, constraints),
        asked=_asked(q),
        constraints=tuple(constraints),
        intent=intent,
        items=items,
        yes_no=is_yes_no(q),
        defined=defined_term(q),
    )


# ------------------------------------------------------------------------------------ meeting constraints

Status = Literal["met", "conflict", "absent"]


def _folded(text: str) -> str:
    """Case-folded with spaces, hyphens and the middle dot removed: "Bankman-Fried" meets "bankman fried"."""
    return re.sub(r"[\s\-·•_]+", "", text.casefold())


def _mentions(text: str, constraint: Constraint) -> list[str]:
    """What `text` says of a constraint's kind, for the trace ("2020", "2023", "第二艘")."""
    if constraint.kind == "year":
        return [str(y) for y in sorted(years(text))]
    if constraint.kind == "date":
        return [DATE_SHOWN_ZH.format(month=m, day=d) for m, d in sorted(dates(text))]
    if constraint.kind == "number":
        return [text[q.start : q.end].strip() for q in quantities(text) if q.unit == constraint.unit]
    return []


def meets(constraint: Constraint, text: str) -> Status:
    """Whether `text` (a unit with its title and heading path) says what the question pins down: "met";
    "conflict" when it speaks of a different value of the same kind (another year, another date, another
    count of the same unit); "absent" when it says nothing of it."""
    if constraint.kind == "year":
        said = years(text)
        return "met" if constraint.value in said else "conflict" if said else "absent"
    if constraint.kind == "date":
        said_dates = dates(text)
        return "met" if constraint.value in said_dates else "conflict" if said_dates else "absent"
    if constraint.kind == "number":
        said_quantities = quantities(text)
        if _folded(constraint.surface) in _folded(text):
            return "met"
        same_unit = [q for q in said_quantities if constraint.unit and q.unit == constraint.unit]
        if any(q.value == constraint.value and (q.unit == constraint.unit or not q.unit or not constraint.unit) for q in said_quantities):
            return "met"
        return "conflict" if same_unit else "absent"
    folded = _folded(text)
    if _folded(constraint.surface) in folded:
        return "met"
    parts = [p for p in re.split(r"[\s\-·•]+", constraint.surface.casefold()) if p and p not in _QUESTION_OPENERS]
    if len(parts) > 1 and all(_folded(p) in folded for p in parts):
        return "met"  # "Red Hat Developer Hub 1.8": every word of the name, not necessarily side by side
    return "absent"


@dataclass(frozen=True)
class ConstraintCheck:
    """The question's constraints against the cited units: each met, conflicting or absent."""

    met: tuple[Constraint, ...]
    conflict: tuple[Constraint, ...]
    absent: tuple[Constraint, ...]
    spoken: dict[str, tuple[str, ...]]
    """Per conflicting constraint's surface: what the evidence says of that kind instead ("2020", "2023")."""

    @property
    def missed(self) -> tuple[Constraint, ...]:
        return self.conflict + self.absent

    def reason(self) -> str | None:
        """The first constraint missed, in the user's words: "the question asks about 2021; the evidence
        speaks of 2020 and 2023", "the question names 北京; the cited evidence does not" (None: all met)."""
        for c in self.conflict:
            said = self.spoken.get(c.surface) or ()
            if said:
                shown = ", ".join(said[:-1]) + " and " + said[-1] if len(said) > 1 else said[0]
                return f"the question asks about {c.surface}; the evidence speaks of {shown}"
            return f"the question asks about {c.surface}; the evidence gives another value"
        for c in self.absent:
            return f"the question names {c.surface}; the cited evidence does not"
        return None


def check(question: Question, units: list[str]) -> ConstraintCheck:
    """Each constraint of `question` against the cited `units` (texts with their titles and heading paths):
    met when one unit meets it, a conflict when none does and one speaks of another value."""
    met: list[Constraint] = []
    conflict: list[Constraint] = []
    absent: list[Constraint] = []
    spoken: dict[str, tuple[str, ...]] = {}
    for c in question.constraints:
        statuses = [meets(c, u) for u in units]
        if "met" in statuses:
            met.append(c)
        elif "conflict" in statuses:
            conflict.append(c)
            said = [m for u in units for m in _mentions(u, c)]
            spoken[c.surface] = tuple(dict.fromkeys(said))
        else:
            absent.append(c)
    return ConstraintCheck(tuple(met), tuple(conflict), tuple(absent), spoken)


def holds_asked(question: Question, text: str) -> bool | None:
    """Whether `text` holds an answer of the asked kind the question does not itself name (None: the
    question asks for no particular kind). Money needs a currency beside the number, a version a dotted
    number, a person or a named thing a name the taggers find."""
    from petrichor_serving.answer.answer_types import ANSWER_TYPES, find_spans, holds_answer

    if question.asked is None:
        return None
    named = {c.value for c in question.constraints}
    if question.asked == "money":
        return any(q.unit in CURRENCY_UNITS and q.value not in named for q in quantities(text))
    if question.asked == "version":
        asked = {c.surface for c in question.constraints}
        return any(m.group(0) not in asked for m in DOTTED_NUMBER.finditer(text))
    kind = next((t for t in ANSWER_TYPES if t.name == question.asked), None)
    if kind is not None:
        return holds_answer(kind, text, question.text)
    asked_names = {_folded(c.surface) for c in question.constraints}
    return any(_folded(s.text) not in asked_names for s in find_spans(question.asked, text))
