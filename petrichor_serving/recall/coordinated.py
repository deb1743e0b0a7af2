"""Coordinated values: a question that joins values of one kind by a conjunction asks about each of them.

"上海和北京2021年的GDP分别是多少", "2022年和2023年春运首日", "the Fortune and the TechCrunch articles": one
passage rarely holds both, and a search for the whole question finds the better-matched value's passages
first. Each value is searched as well in a sub-query that leaves the others out ("上海2021年的GDP分别是多少",
"北京2021年的GDP分别是多少"), and balancing keeps each sub-query's first article (`balance.sub_query_leads`).

Values are recognised by their kind, not by any question's wording: years (`lang.numbers.YEAR`), the proper
names jieba tags in Han text (person, place, organisation, other name) and capitalised words in Latin text.
Two are coordinated when nothing but a coordinating conjunction (`lang.cues.COORDINATOR`, a closed class)
stands between them; "研究与开发" (no names) and "2021年GDP与2020年相比" (a word between) are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from petrichor_core.text.lang import has_cjk, init_posseg
from petrichor_core.text.lang.cues import COORDINATOR
from petrichor_core.text.lang.numbers import YEAR, YEAR_MARK

MAX_VALUES = 4
"""At most this many coordinated values are searched each on its own."""
_NAME_FLAGS = ("nr", "ns", "nt", "nz")
"""jieba's tags of person, place, organisation and other proper names."""
_CAPITALISED = re.compile(r"\b[A-Z][\w.'’+-]*(?:\s+[A-Z][\w.'’+-]*)*")


@dataclass(frozen=True)
class Value:
    kind: str
    start: int
    end: int


def values(text: str) -> list[Value]:
    """The years and proper names of `text`, in order, none overlapping another."""
    found: list[Value] = []
    for m in YEAR.finditer(text):
        end = m.end() + (1 if text[m.end() : m.end() + 1] == YEAR_MARK and m.group("y") else 0)
        found.append(Value("year", m.start(), end))
    if has_cjk(text):
        pos = 0
        for token in init_posseg().lcut(text):
            start, pos = pos, pos + len(token.word)
            if token.flag.startswith(_NAME_FLAGS) and len(token.word.strip()) >= 2 and has_cjk(token.word):
                found.append(Value("name", start, pos))
    for m in _CAPITALISED.finditer(text):
        if m.start() > 0:  # a capital opening the question is the sentence's
            found.append(Value("name", m.start(), m.end()))
    found.sort(key=lambda v: (v.start, -v.end))
    out: list[Value] = []
    for v in found:
        if not out or v.start >= out[-1].end:
            out.append(v)
    return out


def coordinated_groups(text: str) -> list[list[Value]]:
    """Runs of two or more values of one kind with nothing but a coordinating conjunction between neighbours."""
    groups: list[list[Value]] = []
    run: list[Value] = []
    for v in values(text):
        if run and v.kind == run[-1].kind and COORDINATOR.fullmatch(text[run[-1].end : v.start]):
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
            query = f"{text[:start]}{text[v.start : v.end]}{text[end:]}".strip()
            if query not in out:
                out.append(query)
    return out[:MAX_VALUES]
