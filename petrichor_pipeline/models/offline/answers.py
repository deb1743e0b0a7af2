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
from typing import Any, Iterator, Sequence

from petrichor_pipeline.models.offline.address import addresses_the_assistant
from petrichor_pipeline.models.offline.answer_types import asked_type, holds_answer
from petrichor_pipeline.models.protocols import EvidenceText
from petrichor_pipeline.models.offline.sentences import Sentence, informative, split_sentences
from petrichor_pipeline.models.offline.overlap import search_tokens
from petrichor_pipeline.models.offline.stopwords import CHINESE
from petrichor_pipeline.text.lang import CJK_RUN, NOT_FOUND, has_cjk, language_of
from petrichor_pipeline.text.markdown import Line, LineKind, is_table_rule, scan_lines

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
    """The quote: a verbatim slice of the passage."""
    heading_path: tuple[str, ...]
    code: bool = False
    header: str = ""
    """A table row's header row (its labels), "" for anything else."""
    lead: str = ""
    """For a sentence that ends in a colon and carries the block it introduces: the sentence alone, which is
    what the unit is scored by (the block says how, the sentence says what). "" for anything else."""

    @property
    def scored(self) -> str:
        """The text the question is matched against."""
        return self.lead or self.text

    def display(self) -> str:
        """How the answer shows the unit: a table row beside its labels, a block ending on its own line (a
        marker after a closing fence would break it), anything else as quoted."""
        if self.lead:
            return self.text + "\n"
        if not self.header:
            return self.text
        labels = [c.strip() for c in self.header.split("|")]
        cells = [c.strip() for c in self.text.split("|")]
        if len(labels) != len(cells):
            return f"{self.header}: {self.text}"
        return "; ".join(f"{label}: {cell}" if label else cell for label, cell in zip(labels, cells))


@dataclass(frozen=True)
class _Span:
    """A unit's place in the passage while the units are collected."""

    start: int
    end: int
    unit: Unit


def answer_units(markdown: str) -> list[Unit]:
    """Quotable units of a passage in order: table rows and short list items whole, prose sentence by
    sentence, code line by line; a sentence ending in a colon also as one unit with the list, table or
    fenced block it introduces (`_with_blocks`). A line that addresses the assistant as instructions
    (`addresses_the_assistant`) gives no unit: evidence is data, never the answer's voice."""
    lines = list(scan_lines(markdown))
    spans: list[_Span] = []
    path: list[tuple[int, str]] = []
    long_lines: list[tuple[int, int]] = []
    header = ""
    for scanned in lines:
        line, start = scanned.text, scanned.start
        stripped = line.strip()
        if scanned.kind is LineKind.FENCE or not stripped:
            continue
        if scanned.kind is LineKind.CODE:
            lead = len(line) - len(line.lstrip())
            spans.append(_Span(start + lead, start + lead + len(stripped), Unit(stripped, tuple(t for _, t in path), code=True)))
            continue
        if scanned.heading:
            path = [p for p in path if p[0] < scanned.level] + [(scanned.level, scanned.title)]
            continue
        if is_table_rule(line):
            if spans and "|" in spans[-1].unit.text and not spans[-1].unit.header and not spans[-1].unit.code:
                header = spans.pop().unit.text  # the row above a rule labels the rows below it
            continue
        if addresses_the_assistant(stripped):
            continue
        lead = _LEAD.match(line).end()
        body = line[lead:].rstrip().rstrip("|").rstrip()
        row = "|" in body
        if not row:
            header = ""
        item = row or line[:lead].strip() != ""  # a table row or a list item: quoted whole
        if not item or len(body) > SHORT_LINE[language_of(body)]:
            long_lines.append((start, start + len(line)))
            spans.append(_Span(start, start, Unit("", tuple(t for _, t in path))))  # placeholder keeps document order
        elif informative(body):
            spans.append(_Span(start + lead, start + lead + len(body), Unit(body, tuple(t for _, t in path), header=header if row else "")))
    sentences = split_sentences(markdown)
    out: list[_Span] = []
    long_iter = iter(long_lines)
    for span in spans:
        if span.unit.text:
            out.append(span)
            continue
        lo, hi = next(long_iter)
        pieces = [s for s in sentences if lo <= s.start < hi]
        out.extend(_Span(a, b, Unit(markdown[a:b], span.unit.heading_path)) for a, b in _whole_sentences(pieces))
    return _with_blocks(markdown, lines, out)


MAX_BLOCK_QUOTE = 1200
"""A sentence carries the block it introduces only while the two stay within this many code points: a
longer list or listing is quoted by its own units."""
_INTRODUCES = re.compile(r"[:：][”’\"'』」）)*_`]*$")
_LIST_ITEM = re.compile(r"^[\t ]*(?:[-*+]|\d{1,3}[.)])[\t ]+\S")


def _with_blocks(markdown: str, lines: list[Line], spans: list[_Span]) -> list[Unit]:
    """The units, each sentence that ends its line in a colon quoted with the list, table or fenced block that
    comes next in the passage (blank lines between allowed); the block's own lines stay units too. The colon says
    the sentence is incomplete without what follows ("To serve an older snapshot, write its version into
    `CURRENT`:" is an answer only with its commands), whatever the words. The block must be whole in the
    passage (its fence closed) and hold no instruction to the
    assistant."""
    line_at = {line.start: i for i, line in enumerate(lines)}
    return [_carried(markdown, lines, line_at, span) for span in spans]


def _carried(markdown: str, lines: list[Line], line_at: dict[int, int], span: _Span) -> Unit:
    unit = span.unit
    if unit.code or unit.header or not _INTRODUCES.search(unit.text):
        return unit
    nl = markdown.find("\n", span.end)
    if nl < 0 or markdown[span.end : nl].strip():
        return unit  # the colon is not at the end of its line, or the passage ends there
    end = _block_end(lines, line_at.get(nl + 1))
    if end is None or end - span.start > MAX_BLOCK_QUOTE or addresses_the_assistant(markdown[nl + 1 : end]):
        return unit
    return Unit(markdown[span.start : end], unit.heading_path, lead=unit.text)


def _block_end(lines: list[Line], i: int | None) -> int | None:
    """End offset of the list, table or fenced block starting at line `i` (after blank lines), or None."""
    if i is None:
        return None
    while i < len(lines) and lines[i].kind is LineKind.BODY and not lines[i].text.strip():
        i += 1
    if i >= len(lines):
        return None
    first = lines[i]
    if first.kind is LineKind.FENCE:
        for j in range(i + 1, len(lines)):
            if lines[j].kind is LineKind.FENCE:
                return lines[j].start + len(lines[j].text)
        return None  # unclosed: the passage cuts the block
    if first.kind is not LineKind.BODY:
        return None
    if first.text.lstrip().startswith("|"):
        keep = lambda line: line.text.lstrip().startswith("|")  # noqa: E731
    elif _LIST_ITEM.match(first.text):
        keep = lambda line: bool(_LIST_ITEM.match(line.text)) or line.text[:1] in " \t"  # noqa: E731 (items and their indented lines)
    else:
        return None
    j = i
    while j + 1 < len(lines) and lines[j + 1].kind is LineKind.BODY and lines[j + 1].text.strip() and keep(lines[j + 1]):
        j += 1
    return lines[j].start + len(lines[j].text.rstrip())


_CLOSERS = "”’\"'』」）)"
_ANAPHOR = re.compile(r"\s*(?:这[个些种一项位]|该|此(?!外)|其(?![他它余实次])|Th(?:is|ese)\b|Such\b)")
"""A sentence opening on a pointer back (这个奖项…, 其人…, This option…) says what it says about the sentence
before it: the two are quoted together."""


def _whole_sentences(pieces: Sequence[Sentence]) -> Iterator[tuple[int, int]]:
    """The (start, end) of the sentences of one line, rejoined where a Chinese semicolon cut them: the clauses
    after a ； go on about the same subject (1968年改为…；1990年因…改…), and the answer is as often in a later
    clause as in the first. A rejoined sentence stays within twice `SHORT_LINE`, so a long ；-separated list is
    still cut. English `;` keeps cutting: a clause such as "the default is `./data`." is the quote wanted. A
    sentence that points back (`_ANAPHOR`) is joined to the one before it."""
    start = None
    for piece, after in zip(pieces, [*pieces[1:], None]):
        start = piece.start if start is None else start
        cut = not piece.text.rstrip(_CLOSERS).endswith("；") and not (after is not None and _ANAPHOR.match(after.text))
        if after is None or cut or after.end - start > 2 * SHORT_LINE[language_of(piece.text)]:
            yield start, piece.end
            start = None


_WH = re.compile(r"哪[里儿些个位种]|多少|什么(?:地方|样)?|怎么样?|怎样|为什么|如何|谁|哪|几|何|怎|[这那][个张位种本部首座条次项家所]")
"""Chinese question words: a token holding one (由谁来, 哪一年) names no subject."""
_GLUE = re.compile(r"多[大高长远重久深宽厚]|[的是了在和与及有为被把由于将对从向之其也都就而吗呢]")
"""Wh-phrases and one-character function words: a phrase across them says nothing about the subject."""
HEADING_WEIGHT = 2.0
"""Points per question term in the passage's title or section path (which passage is about the question),
scaled by how much of that heading the question names (`_Named`). Unscaled, news headlines that share a few
words with a long question outvoted the sentence holding the fact: multihop_rag_en dev sample, quotes
holding the evidence fact 25 / 34 → 22 / 35."""
SUBJECT_WEIGHT = 0.5
"""A question term its passage's title holds names the article, not the sentence: it counts this share."""
ALIGNMENT_WEIGHT = 1.0
"""A unit that repeats the question's phrases (its character bigrams for Chinese, consecutive word pairs
for English) is the one the question paraphrases: its score grows by up to this share."""
TYPE_MISSING = 0.7
"""A question asking for a number, a date or a place scores a unit without one at this share."""


def _question_terms(question: str) -> list[str]:
    """Content tokens of the question, then its Han characters no token covers (卵 in 鱼的卵有什么特征):
    a one-character noun is often the very thing asked about."""
    terms = list(dict.fromkeys(t for t in search_tokens(question) if t not in QUESTION_WORDS and not _WH.search(t)))
    covered = "".join(terms)
    rest = _GLUE.sub(" ", _WH.sub(" ", question.lower()))
    singles = [ch for run in CJK_RUN.findall(rest) for ch in run if ch not in covered and ch not in CHINESE]
    return terms + list(dict.fromkeys(singles))


def _phrases(text: str) -> set[str]:
    """Character bigrams of the Han runs and consecutive content-word pairs of the Latin text."""
    lowered = _GLUE.sub(" ", _WH.sub(" ", text.lower()))
    grams = {run[i : i + 2] for run in CJK_RUN.findall(lowered) for i in range(len(run) - 1)}
    words = search_tokens(re.sub(CJK_RUN, " ", lowered))
    return grams | {f"{a} {b}" for a, b in zip(words, words[1:])}


def _matches(term: str, text: str, tokens: set[str]) -> bool:
    """A Han term matches as a substring (jieba cuts a name differently in a question and in prose)."""
    return term in text if has_cjk(term) else term in tokens


class _Named:
    """How far the question names a unit's title and headings, cached per heading.

    A heading the question names whole (an encyclopedia article's subject, a section's title) says the unit
    is about the question; a news headline that shares two words with a long question says little. So each
    question term a heading holds counts the share of that heading's own terms the question repeats."""

    def __init__(self, question: str) -> None:
        self.text = question.lower()
        self.tokens = set(search_tokens(question))
        self.cache: dict[str, tuple[float, frozenset[str]]] = {}

    def named_share(self, heading: str) -> tuple[float, frozenset[str]]:
        if heading not in self.cache:
            lowered = heading.lower()
            own = set(search_tokens(lowered))
            share = sum(_matches(t, self.text, self.tokens) for t in own) / len(own) if own else 0.0
            self.cache[heading] = (share, frozenset(own))
        return self.cache[heading]

    def heading_points(self, headings: Sequence[str], wanted: Sequence[str]) -> float:
        """Σ over the question terms some heading holds of the best share that a holding heading is named."""
        best: dict[str, float] = {}
        for heading in headings:
            if not heading:
                continue
            share, own = self.named_share(heading)
            lowered = heading.lower()
            for t in wanted:
                if _matches(t, lowered, own):
                    best[t] = max(best.get(t, 0.0), share)
        return sum(best.values())


@dataclass(frozen=True)
class Scored:
    score: float
    order: int
    """Position in the pool: evidence order, then document order."""
    evidence: int
    """1-based position of the unit's evidence item."""
    unit: Unit


def score_units(question: str, evidence: Sequence[EvidenceText]) -> list[Scored]:
    """Every unit sharing a content word with the question, best first.

    Score: the idf-weighted question terms it holds (idf over the units read; a term of the passage's title
    at `SUBJECT_WEIGHT`), plus `HEADING_WEIGHT` per question term of its title and section, by the share of
    that heading the question names; raised by its share of the question's phrases not in the title;
    lowered when the question asks for a kind of answer (number, date, place) the unit does not hold, and by
    its evidence's rank."""
    wanted = _question_terms(question)
    phrases = _phrases(question)
    kind = asked_type(question)
    named = _Named(question)
    pool: list[tuple[int, Unit, str, set[str], float, str]] = []
    for n, item in enumerate(evidence, start=1):
        title = item.title.lower()
        for unit in answer_units(item.content):
            heading = named.heading_points((item.title, *unit.heading_path, unit.header), wanted)
            pool.append((n, unit, unit.scored.lower(), set(search_tokens(unit.scored)), heading, title))
    held = [{t for t in wanted if _matches(t, text, toks)} for _, _, text, toks, _, _ in pool]
    df = Counter(t for terms in held for t in terms)
    scored: list[Scored] = []
    for order, ((n, unit, text, _, heading, title), overlap) in enumerate(zip(pool, held)):
        if not overlap:
            continue
        score = sum((1.0 + math.log(1 + len(pool) / df[t])) * (SUBJECT_WEIGHT if t in title else 1.0) for t in overlap)
        score += HEADING_WEIGHT * heading  # the section it sits in is about the question too
        about = {p for p in phrases if p not in title}  # the phrases beyond the article's own name
        if about:
            score *= 1.0 + ALIGNMENT_WEIGHT * len(about & _phrases(unit.scored)) / len(about)
        if kind is not None and not holds_answer(kind, unit.scored, question):
            score *= TYPE_MISSING
        if unit.code:
            score *= 0.6
        if len(unit.scored) < 8:
            score *= 0.5
        score /= 1.0 + EVIDENCE_RANK_DECAY * (n - 1)
        scored.append(Scored(score, order, n, unit))
    scored.sort(key=lambda s: (-s.score, s.order))
    return scored


def answer(question: str, evidence: Sequence[EvidenceText]) -> dict[str, Any]:
    """Up to three passages with the best scores (`score_units`), each cited; or an explicit not-found.

    Each citation carries its `rank` (1 = best scored), its `score` and the `text` the answer shows for it,
    so a caller can keep fewer (the agent's fact plan keeps the passages close to the best)."""
    lang = language_of(question)
    scored = score_units(question, evidence)
    if not scored:
        return {"answer": NOT_FOUND[lang], "citations": []}
    best = scored[0].score
    chosen: list[tuple[int, Scored]] = []
    for s in scored:
        if s.score < best * KEEP_RATIO or len(chosen) == MAX_ANSWER_UNITS:
            break
        if all(s.unit.text not in other.unit.text and other.unit.text not in s.unit.text for _, other in chosen):
            chosen.append((len(chosen) + 1, s))
    chosen.sort(key=lambda c: c[1].order)  # read in document order
    joiner = "" if lang == "zh" else " "
    text = joiner.join(f"{s.unit.display()} [{s.evidence}]" for _, s in chosen)
    citations = [
        {"marker": s.evidence, "evidence_id": evidence[s.evidence - 1].evidence_id, "quote": s.unit.text, "text": s.unit.display(), "rank": rank, "score": round(s.score, 4)}
        for rank, s in chosen
    ]
    return {"answer": text, "citations": citations}
