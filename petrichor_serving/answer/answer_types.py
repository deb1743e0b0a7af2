"""What kind of answer a question asks for, and whether a passage holds one: the offline answerer's cue.

"多少 / how many" wants a number, "何时 / which year" a date, "哪里 / where" a place. A sentence that shares
the question's words but holds no answer of the asked kind (no number, no date) is usually the one beside
the point. Numbers and years the question itself names do not count as an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from petrichor_core.text.lang import CJK_CLASS, has_cjk
from petrichor_core.text.lang.cues import ALIAS_HELD, DEFINITION_VERBS_EN, DEFINITION_VERBS_ZH, PLACE_HELD
from petrichor_core.text.lang.numbers import (
    CURRENCY_AFTER,
    DATE_PART,
    MONEY_MARK,
    NUMBER_HELD,
    NUMBER_SPAN,
    TIME_HELD,
    TIME_SPAN,
)
from petrichor_core.text.lang.question_words import (
    ALIAS_ASKED,
    ALTERNATIVE_EN,
    COUNTS_TIME,
    DEFINE_EN,
    DEFINE_ZH,
    ENTITY_ASKED,
    HOW_TO,
    MAIN_CLAUSE_EN,
    NOT_HOW_TO_ZH,
    NUMBER_ASKED,
    PERSON_ASKED,
    PLACE_ASKED,
    REQUEST_EN,
    REQUEST_ZH,
    TIME_ASKED,
    WH_CLAUSE_EN,
    WH_DIRECT_EN,
    YES_NO_EN,
    YES_NO_ZH,
)
from petrichor_core.text.lang.stopwords import ENGLISH, FUNCTION_CHARS


@dataclass(frozen=True)
class AnswerType:
    name: str
    asked: re.Pattern[str]
    """Question wording that asks for this kind of answer."""
    held: re.Pattern[str]
    """Text that can be an answer of this kind."""


ANSWER_TYPES: tuple[AnswerType, ...] = (
    AnswerType("time", TIME_ASKED, TIME_HELD),
    AnswerType("number", NUMBER_ASKED, NUMBER_HELD),
    AnswerType("place", PLACE_ASKED, PLACE_HELD),
    AnswerType("alias", ALIAS_ASKED, ALIAS_HELD),
)
"""Checked in order: "哪一年" asks for a time before "几" could make it a number. `alias` asks for another
name of what the question names ("又叫什么", "also known as"): a unit holding an alias cue (又名, 亦称, "known
as") is the one that gives it; all four dev sets: cmrc +1 answer holding gold, the others unchanged.
A question without a question word asks for what its last noun names: "C919商业首飞时间", "艾尔登法环发售日期",
"EMNLP2022的举办地", "… release date", "… location" ask for a time or a place as "什么时候" and "在哪里" do;
all four dev sets: rgb +6 answers holding gold (0.827 → 0.855) and citation precision 0.782 → 0.804, the other
three answer exactly as before."""

_DIGITS = re.compile(r"\d+")


def asked_type(question: str) -> AnswerType | None:
    """The kind of answer the question asks for, or None when its wording does not say."""
    return next((t for t in ANSWER_TYPES if t.asked.search(question)), None)


def date_parts(text: str, question: str) -> list[tuple[int, int]]:
    """Where `text` has a date's parts (2021年, 12月, 10日) that a count question cannot take as its number:
    none when the question counts time ("多少年", "how long")."""
    return [] if COUNTS_TIME.search(question) else [m.span() for m in DATE_PART.finditer(text)]


def holds_answer(kind: AnswerType, text: str, question: str) -> bool:
    """Whether `text` holds an answer of `kind` that the question does not already name. A number that is
    part of a date (12月10日) is a date, not a count (`_date_parts`)."""
    named = set(_DIGITS.findall(question))
    dates = date_parts(text, question) if kind.name == "number" else []
    for m in kind.held.finditer(text):
        if any(a <= m.start() < b for a, b in dates):
            continue
        digits = _DIGITS.findall(m.group(0))
        if not digits or any(d not in named for d in digits):
            return True
    return False


# ------------------------------------------------------------------------------------- short answers
#
# A question asking for a number, a date, a place, a person or a named thing is answered first by that span
# of the evidence, then by the quote it comes from. The spans are found by the structure of text (digits and
# units, date shapes, capitalised or quoted names, the part-of-speech tagger's person, place and organisation
# names for Chinese), never by lists of the answers expected.


SPAN_KINDS = ("time", "number", "place", "person", "entity")


def short_kind(question: str) -> str | None:
    """The kind of short answer the question asks for (`SPAN_KINDS`), or None: the answer-type cue first
    ("哪一年" is a time before "哪" could make it a name), then a person, then any named thing."""
    kind = asked_type(question)
    if kind is not None:
        return kind.name
    if PERSON_ASKED.search(question):
        return "person"
    if ENTITY_ASKED.search(question):
        return "entity"
    return None


_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|the|de|von|van|and|&)\s+)?[A-Z][\w'’.-]*)*")
_QUOTED = re.compile(r"《[^》]{1,30}》|「[^」]{1,30}」|“[^”]{1,30}”|\"[^\"\n]{1,40}\"|'[A-Z][^'\n]{1,40}'|`[^`\n]{1,60}`")
_TRANSLITERATED = re.compile(f"[{CJK_CLASS}]{{1,8}}(?:[·•][{CJK_CLASS}]{{1,8}})+")
_NAME_FLAGS = {"person": ("nr",), "place": ("ns",), "entity": ("nr", "ns", "nt", "nz", "j")}
_PLACE_LEAD = re.compile(r"\b(?:in|at|near|from|to)\s+(?:the\s+)?$", re.I)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


def name_start(text: str, start: int, end: int) -> int:
    """Where the capitalised run `text[start:end]` starts as a name: past an opening common word that a
    sentence start capitalised ("When Google…", "Using Caroline Ellison…", "Then the Vikings…"), unless the
    text also writes the whole run mid-sentence ("The Verge")."""
    run = text[start:end]
    first = run.split()[0] if " " in run else ""
    if not first or first.lower() not in ENGLISH or not (start == 0 or re.search(r"[.!?:]\s*$", text[:start])):
        return start
    if re.search(rf"[^.!?:\s]\s+{re.escape(run)}\b", text):
        return start
    start += len(first) + 1
    lower_run = re.match(r"(?:[a-z]\S*\s+)*", text[start:end])
    assert lower_run is not None  # the pattern matches the empty string too
    return start + len(lower_run.group(0))


VERSION_SPAN = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b")


def _address(match: re.Match[str], text: str) -> bool:
    """A dotted number that is a network address, not a version: four parts that are all bytes (an IPv4
    address, `127.0.0.1`) or one followed by a port (`host:8000`)."""
    parts = match.group(0).lstrip("v").split(".")
    return (len(parts) == 4 and all(int(p) <= 255 for p in parts)) or bool(re.match(r":\d", text[match.end() :]))


def find_spans(kind: str, text: str) -> list[Span]:
    """Spans of `text` that can answer a question of `kind`, in order, possibly overlapping. An amount of
    money is a number with its currency (a sign before it or a currency word after it, which the span takes
    in); a version is a dotted number that is not a network address."""
    if kind == "money":
        spans = []
        for m in NUMBER_SPAN.finditer(text):
            start, end = m.start(), m.end()
            if start and text[start - 1] in "$€£¥":
                start -= 1
            after = CURRENCY_AFTER.match(text, end)
            end = after.end() if after else end
            if MONEY_MARK.search(text[start:end].strip()):
                spans.append(Span(start, end, text[start:end].strip()))
        return spans
    if kind == "version":
        return [Span(m.start(), m.end(), m.group(0)) for m in VERSION_SPAN.finditer(text) if not _address(m, text)]
    if kind == "number":
        found = [m for m in NUMBER_SPAN.finditer(text) if m.group(0).strip()]
    elif kind == "time":
        found = list(TIME_SPAN.finditer(text))
    else:
        found = []
    spans = [Span(m.start(), m.end(), m.group(0).strip()) for m in found]
    if kind in ("person", "place", "entity"):
        spans += _names(kind, text)
    return sorted(spans, key=lambda s: (s.start, -s.end))


def _posseg(text: str) -> list:
    from petrichor_core.text.lang import init_posseg

    return init_posseg().lcut(text)


def _name_head(run: str) -> int:
    """How many leading characters of a Han run still belong to the name before it: up to four, stopping at
    the first verb, preposition, particle or conjunction the tagger sees."""
    n = 0
    for token in _posseg(run):
        if token.flag[:1] in "vpuc" or n + len(token.word) > 4:
            break
        n += len(token.word)
    return n


def _outermost(spans: list[Span]) -> list[Span]:
    """The spans not inside another one (海因里希 inside 海因里希·冯·施特凡)."""
    return [s for s in spans if not any(o is not s and o.start <= s.start and s.end <= o.end and (o.start, o.end) != (s.start, s.end) for o in spans)]


def _titled(quoted: str) -> bool:
    """A quoted span that can be a name or a title: Han text, code, or Latin words opening on a capital or a
    digit. Quoted speech ("“siphons off”") opens lower-case and names nothing."""
    inner = quoted[1:-1].lstrip()
    return quoted[0] == "`" or has_cjk(inner) or inner[:1].isupper() or inner[:1].isdigit()


def _names(kind: str, text: str) -> list[Span]:
    """Names in `text`: transliterated names (海因里希·冯·施特凡), jieba's tagged person / place / organisation
    names for Han text (neighbours merged), capitalised word runs for Latin text (a place only after
    in / at / from…), and quoted titles."""
    spans: list[Span] = []
    for m in _TRANSLITERATED.finditer(text):
        start, end = m.start(), m.end()
        first, last = m.group(0).split("·")[0] if "·" in m.group(0) else m.group(0).split("•")[0], re.split("[·•]", m.group(0))[-1]
        cut = max((first.rfind(c) for c in FUNCTION_CHARS), default=-1)
        start += max(cut + 1, len(first) - 4)
        head = _name_head(last)
        end -= len(last) - head if head else len(last) + 1  # nothing of a name after the dot: stop before it
        spans.append(Span(start, end, text[start:end]))
    if has_cjk(text):
        flags = _NAME_FLAGS[kind]
        pos, run_start, run_end = 0, -1, -1
        for token in _posseg(text):
            start, end = pos, pos + len(token.word)
            pos = end
            if token.flag.startswith(flags) and len(token.word) >= 1:
                run_start = start if run_start < 0 or start != run_end else run_start
                run_end = end
                continue
            if run_start >= 0 and run_end - run_start >= 2:
                spans.append(Span(run_start, run_end, text[run_start:run_end]))
            run_start = run_end = -1
        if run_start >= 0 and run_end - run_start >= 2:
            spans.append(Span(run_start, run_end, text[run_start:run_end]))
    for m in _CAPITALISED.finditer(text):
        if kind == "place" and not _PLACE_LEAD.search(text[: m.start()]):
            continue
        word = m.group(0)
        if " " not in word and (m.start() == 0 or re.search(r"[.!?:]\s*$", text[: m.start()])):
            # a lone capitalised word opening a sentence is a name only when it is capitalised mid-sentence
            # too, or written with an inner capital or digit (TechCrunch, S3)
            inner = re.search(r"[A-Z0-9]", word[1:]) is not None
            elsewhere = re.search(rf"[^.!?:\s]\s+{re.escape(word)}\b", text) is not None
            if word.lower() in ENGLISH or not (inner or elsewhere):
                continue
        start = name_start(text, m.start(), m.end())
        spans.append(Span(start, m.end(), text[start : m.end()].rstrip(".")))
    if kind == "entity":
        spans += [Span(m.start(), m.end(), m.group(0)) for m in _QUOTED.finditer(text) if _titled(m.group(0))]
    return _outermost(spans)


# ----------------------------------------------------------------------------------------- yes / no

CLAUSE = re.compile(r"[,;:，；：。！？!?]")


def is_request(question: str) -> bool:
    """A request put as a question: answered with what it asks for, not Yes or No."""
    return bool(REQUEST_EN.search(question) or REQUEST_ZH.search(question))


def is_yes_no(question: str) -> bool:
    """English questions whose main clause is led by an auxiliary ("Is…", "Does…", "After A and B, was
    there…?") and no clause by a question word; Chinese 是不是 / 是否 / 吗 forms. Requests ("Can you explain
    how…?"), alternative questions ("…, or do we need…?") and direct how-questions are not yes/no questions."""
    if is_request(question) or ALTERNATIVE_EN.search(question) or WH_DIRECT_EN.search(question):
        return False
    if YES_NO_EN.match(question) or YES_NO_ZH.search(question):
        return True
    return bool(MAIN_CLAUSE_EN.search(question)) and not WH_CLAUSE_EN.search(question)


# ------------------------------------------------------------------------------------------- how-to


def is_how_to(question: str) -> bool:
    """Whether the question asks how to do something: answered by the steps, commands or code of the
    section that matches, whole. Count and measure questions ("how many", "多少") and 怎么样 are not."""
    if asked_type(question) is not None or any(w in question for w in NOT_HOW_TO_ZH):
        return False
    return bool(HOW_TO.search(question))


# ---------------------------------------------------------------------------------------- definitions


def defined_term(question: str) -> str | None:
    """The term a definition question asks about ("What is RRF and why is it used?" → "RRF",
    "什么是主节点？" → "主节点"), or None."""
    m = DEFINE_EN.match(question)
    if m and len(m.group("term").split()) <= 5:
        return m.group("term").strip()
    m = DEFINE_ZH.match(question)
    if m:
        return (m.group("a") or m.group("b")).strip()
    return None


def defines(term: str, text: str, expansion: str | None = None) -> bool:
    """Whether `text` defines `term` (or its expansion): the term followed by a copula or definition verb,
    or by / inside a parenthesis that spells it out ("X is…", "X stands for…", "X（…）是…", "Y (X)")."""
    for name in filter(None, (term, expansion)):
        n = re.escape(name)
        paren = r"\s*(?:\([^)]{1,80}\)|（[^）]{1,40}）)?\s*,?\s*"
        if re.search(rf"(?<!\w){n}{paren}{DEFINITION_VERBS_EN}", text, re.I):
            return True
        if re.search(rf"{n}{paren}{DEFINITION_VERBS_ZH}", text):
            return True
    if expansion and re.search(
        rf"{re.escape(expansion)}\s*[（(]\s*{re.escape(term)}\s*[)）]|{re.escape(term)}\s*[（(]\s*{re.escape(expansion)}", text, re.I
    ):
        return True
    if _subject_of(term, text) or (expansion and _subject_of(expansion, text)):
        return True
    return bool(re.search(rf"[\w\s-]{{3,60}}[（(]\s*{re.escape(term)}\s*[)）]", text)) if term.isupper() else False


_VERB_AFTER_SUBJECT = re.compile(r"\s+(?:also\s+|then\s+|only\s+)?[a-z]+(?:s|es|ed)\b")


def _subject_of(term: str, text: str) -> bool:
    """Whether an English sentence opens with `term` as its subject and a verb in the present or past
    ("Reciprocal rank fusion merges…", "The outline holds…"): the sentence says what the term does, which is
    how a glossary defines it. Chinese sentences open on the term with a copula (`defines` above).
    rhdh_docs_en and rgb_zh_reject (replayed on recorded evidence): no answer moves."""
    if has_cjk(term):
        return False
    m = re.match(rf"\s*(?:(?:the|an?)\s+)?{re.escape(term)}(?:\s*\([^)]{{1,80}}\))?", text, re.I)
    return m is not None and bool(_VERB_AFTER_SUBJECT.match(text, m.end()))


_WORD = re.compile(r"[A-Za-z][\w-]*")


def expand_acronym(term: str, text: str) -> str | None:
    """An acronym's spelled-out form in `text`: consecutive words whose initials spell it ("RRF" →
    "reciprocal rank fusion"), or None when `term` is no acronym or nothing spells it."""
    if not re.fullmatch(r"[A-Z]{2,6}", term):
        return None
    words = list(_WORD.finditer(text))
    n = len(term)
    for i in range(len(words) - n + 1):
        window = words[i : i + n]
        if "".join(w.group(0)[0] for w in window).upper() == term and all(w.group(0).upper() != term for w in window):
            if all(window[k + 1].start() - window[k].end() <= 2 for k in range(n - 1)):
                return text[window[0].start() : window[-1].end()]
    return None
