"""Answers quoted from the evidence: the best-matching passages, each cited, or an explicit not-found.

The unit of an answer is what a reader would quote: a whole table row (shown beside its header's labels),
a whole short list item, or one sentence of prose. Every unit is a verbatim slice of the evidence, so its
citation always checks out.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from petrichor_pipeline.models.protocols import EvidenceText
from petrichor_pipeline.models.offline.sentences import informative, split_sentences
from petrichor_pipeline.models.offline.overlap import search_tokens
from petrichor_pipeline.text.lang import NOT_FOUND, language_of
from petrichor_pipeline.text.markdown import LineKind, is_table_rule, scan_lines

MAX_ANSWER_UNITS = 3
KEEP_RATIO = 0.6
"""A further passage joins the answer only if it scores at least this share of the best one."""
EVIDENCE_RANK_DECAY = 0.6
"""Evidence comes best first (the search's order): a passage from the n-th item scores 1 / (1 + 0.6·(n−1)) of
its overlap, so a sentence of a lower-ranked passage must share clearly more with the question to be quoted.
Measured with `petrichor eval --answers` against 0, 0.15 and 0.3: citations from a gold document rose from
0.844 to 0.954 (cmrc) and from 0.686 to 0.761 (rhdh)."""
SHORT_LINE = {"en": 240, "zh": 100}
"""Lines up to this many code points are quoted whole; longer ones sentence by sentence."""
QUESTION_WORDS = frozenset("多少 什么 怎么 怎样 如何 哪些 哪个 哪里 是否 为什么 几个 几种 可以 能否 需要".split())
"""Words that shape a Chinese question but say nothing about its subject."""
_LEAD = re.compile(r"^[\t ]*(?:[-*+][ \t]+|\d{1,3}[.)、][ \t]*|>[ \t]*|\|[ \t]*)*")


@dataclass(frozen=True)
class Unit:
    text: str
    heading_path: tuple[str, ...]
    code: bool = False
    header: str = ""
    """A table row's header row (its labels), "" for anything else."""

    def display(self) -> str:
        """How the answer shows the unit: a table row beside its labels, anything else as quoted."""
        if not self.header:
            return self.text
        labels = [c.strip() for c in self.header.split("|")]
        cells = [c.strip() for c in self.text.split("|")]
        if len(labels) != len(cells):
            return f"{self.header}: {self.text}"
        return "; ".join(f"{label}: {cell}" if label else cell for label, cell in zip(labels, cells))


def answer_units(markdown: str) -> list[Unit]:
    """Quotable units of a passage in order: table rows and short list items whole, prose sentence by
    sentence, code line by line."""
    units: list[Unit] = []
    path: list[tuple[int, str]] = []
    long_lines: list[tuple[int, int]] = []
    header = ""
    for scanned in scan_lines(markdown):
        line, start = scanned.text, scanned.start
        stripped = line.strip()
        if scanned.kind is LineKind.FENCE or not stripped:
            continue
        if scanned.kind is LineKind.CODE:
            units.append(Unit(stripped, tuple(t for _, t in path), code=True))
            continue
        if scanned.heading:
            path = [p for p in path if p[0] < scanned.level] + [(scanned.level, scanned.title)]
            continue
        if is_table_rule(line):
            if units and units[-1].text and "|" in units[-1].text and not units[-1].header:
                header = units.pop().text  # the row above a rule labels the rows below it
            continue
        lead = _LEAD.match(line).end()
        body = line[lead:].rstrip().rstrip("|").rstrip()
        row = "|" in body
        if not row:
            header = ""
        item = row or line[:lead].strip() != ""  # a table row or a list item: quoted whole
        if not item or len(body) > SHORT_LINE[language_of(body)]:
            long_lines.append((start, start + len(line)))
            units.append(Unit("", tuple(t for _, t in path)))  # placeholder keeps document order
        elif informative(body):
            units.append(Unit(body, tuple(t for _, t in path), header=header if row else ""))
    sentences = split_sentences(markdown)
    out: list[Unit] = []
    long_iter = iter(long_lines)
    for unit in units:
        if unit.text:
            out.append(unit)
            continue
        lo, hi = next(long_iter)
        out.extend(Unit(s.text, unit.heading_path) for s in sentences if lo <= s.start < hi)
    return out


def answer(question: str, evidence: Sequence[EvidenceText]) -> dict[str, Any]:
    """Up to three passages with the best idf-weighted term overlap, each cited; or an explicit not-found.

    Each citation carries its `rank` (1 = best scored), its `score` and the `text` the answer shows for it,
    so a caller can keep fewer (the agent's fact plan keeps the passages close to the best)."""
    lang = language_of(question)
    wanted = set(search_tokens(question)) - QUESTION_WORDS
    pool: list[tuple[int, Unit, set[str], set[str]]] = []
    for n, item in enumerate(evidence, start=1):
        for unit in answer_units(item.content):
            heading_terms = set(search_tokens(" ".join((item.title, *unit.heading_path, unit.header))))
            pool.append((n, unit, set(search_tokens(unit.text)), heading_terms))
    df = Counter(tok for _, _, toks, _ in pool for tok in toks)
    scored: list[tuple[float, int, int, Unit]] = []
    for order, (n, unit, toks, heading_terms) in enumerate(pool):
        overlap = wanted & toks
        if not overlap:
            continue
        score = sum(1.0 + math.log(1 + len(pool) / df[t]) for t in overlap)
        score += 0.5 * len(wanted & heading_terms)  # the section it sits in is about the question too
        if unit.code:
            score *= 0.6
        if len(unit.text) < 8:
            score *= 0.5
        score /= 1.0 + EVIDENCE_RANK_DECAY * (n - 1)
        scored.append((score, order, n, unit))
    if not scored:
        return {"answer": NOT_FOUND[lang], "citations": []}
    scored.sort(key=lambda s: (-s[0], s[1]))
    best = scored[0][0]
    chosen: list[tuple[int, int, Unit]] = []
    for score, order, n, unit in scored:
        if score < best * KEEP_RATIO or len(chosen) == MAX_ANSWER_UNITS:
            break
        if all(unit.text != other.text for _, _, _, _, other in chosen):
            chosen.append((order, len(chosen) + 1, score, n, unit))
    chosen.sort(key=lambda c: c[0])  # read in document order
    joiner = "" if lang == "zh" else " "
    text = joiner.join(f"{unit.display()} [{n}]" for _, _, _, n, unit in chosen)
    citations = [
        {"marker": n, "evidence_id": evidence[n - 1].evidence_id, "quote": unit.text, "text": unit.display(), "rank": rank, "score": round(score, 4)}
        for _, rank, score, n, unit in chosen
    ]
    return {"answer": text, "citations": citations}
