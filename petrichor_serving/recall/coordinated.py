"""Coordinated values: a question that joins values of one kind by a conjunction asks about each of them.

"上海和北京2021年的GDP分别是多少", "《人世间》的导演和编剧是谁", "2022年和2023年春运首日", "the Verge and the
Guardian": one passage rarely holds both, and a search for the whole question finds the better-matched
value's passages first. Each value is searched as well in a sub-query that leaves the others out
("上海2021年的GDP是多少", "北京2021年的GDP是多少": a distributive word, 分别, has nothing left to distribute), and balancing keeps each sub-query's first article
(`balance.sub_query_leads`).

Values are recognised by their grammar, not by any question's wording: years (`lang.numbers.YEAR`), the
content words jieba tags in Han text (nouns, verbs, names, times) and capitalised words in Latin text. Two
are coordinated when nothing but a coordinating conjunction stands between them: in Han text a word jieba
tags as a conjunction that is one of `lang.cues.COORDINATOR` ("研究与开发", where 与 is tagged a preposition,
and "速度与激情" stay whole), elsewhere `COORDINATOR` itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from petrichor_core.text.lang import has_cjk, init_posseg
from petrichor_core.text.lang.cues import COORDINATOR, DISTRIBUTIVE
from petrichor_core.text.lang.numbers import YEAR, YEAR_MARK

MAX_VALUES = 4
"""At most this many coordinated values are searched each on its own."""
_CONTENT_FLAGS = ("n", "v", "j", "t", "s", "eng")
"""jieba's tags of content words (nouns and names, verbs, abbreviations, times, places, Latin words): one-
character words, numerals, measure words and adverbs are no values."""
_CAPITALISED = re.compile(r"\b[A-Z][\w.'’+-]*(?:\s+[A-Z][\w.'’+-]*)*")


@dataclass(frozen=True)
class Value:
    """A year, Han content word or capitalised name of the question: its kind, and where it stands."""

    kind: str
    start: int
    end: int


def _han(text: str) -> tuple[list[Value], set[tuple[int, int]]]:
    """The Han text's content words, and the spans of the conjunctions that may coordinate them."""
    words: list[Value] = []
    joins: set[tuple[int, int]] = set()
    pos = 0
    for token in init_posseg().lcut(text):
        start, pos = pos, pos + len(token.word)
        word = token.word.strip()
        if token.flag == "c" or token.flag == "x":
            if word and COORDINATOR.fullmatch(word):
                joins.add((start, pos))
        elif token.flag.startswith(_CONTENT_FLAGS) and len(word) >= 2 and has_cjk(word):
            words.append(Value("word", start, pos))
    return words, joins


def values(text: str) -> tuple[list[Value], set[tuple[int, int]]]:
    """The years, Han content words and capitalised Latin words of `text`, in order, none overlapping another;
    and the spans of the Han conjunctions between them."""
    found: list[Value] = []
    for m in YEAR.finditer(text):
        end = m.end() + (1 if text[m.end() : m.end() + 1] == YEAR_MARK and m.group("y") else 0)
        found.append(Value("year", m.start(), end))
    joins: set[tuple[int, int]] = set()
    if has_cjk(text):
        words, joins = _han(text)
        found += words
    for m in _CAPITALISED.finditer(text):
        if m.start() > 0:  # a capital opening the question is the sentence's
            found.append(Value("name", m.start(), m.end()))
    found.sort(key=lambda v: (v.start, -v.end))
    out: list[Value] = []
    for v in found:
        if not out or v.start >= out[-1].end:
            out.append(v)
    return out, joins


def _joined(text: str, a: Value, b: Value, joins: set[tuple[int, int]]) -> bool:
    if a.kind != b.kind:
        return False
    if a.kind == "word":  # Han words: one conjunction the tagger reads as one, and nothing else
        return (a.end, b.start) in joins
    return bool(COORDINATOR.fullmatch(text[a.end : b.start]))


def coordinated_groups(text: str) -> list[list[Value]]:
    """Runs of two or more values of one kind with nothing but a coordinating conjunction between neighbours."""
    found, joins = values(text)
    groups: list[list[Value]] = []
    run: list[Value] = []
    for v in found:
        if run and _joined(text, run[-1], v, joins):
            run.append(v)
            continue
        if len(run) >= 2:
            groups.append(run)
        run = [v]
    if len(run) >= 2:
        groups.append(run)
    return groups


def coordinated_queries(text: str) -> list[str]:
    """One sub-query per coordinated value: the question with the run of values replaced by that value alone."""
    out: list[str] = []
    for group in coordinated_groups(text):
        start, end = group[0].start, group[-1].end
        for v in group[:MAX_VALUES]:
            query = DISTRIBUTIVE.sub("", f"{text[:start]}{text[v.start : v.end]}{text[end:]}").strip()
            if query not in out:
                out.append(query)
    return out[:MAX_VALUES]
