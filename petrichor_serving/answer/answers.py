"""Answers quoted from the evidence: the best-matching passages, each cited, or an explicit not-found.

The unit of an answer is what a reader would quote: a whole table row (shown beside its header's labels),
a whole short list item, or one sentence of prose. Every unit is a verbatim slice of the evidence, so its
citation always checks out.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import Any

from petrichor_core.models.protocols import EvidenceText
from petrichor_core.text.lang import CJK_RUN, NOT_FOUND, has_cjk, init_posseg, language_of
from petrichor_core.text.lang.cues import NEGATION, REASON, STATE_OFF, STATE_ON
from petrichor_core.text.lang.numbers import GENERIC_MEASURE_WORD, UNIT_AT_END
from petrichor_core.text.lang.question_words import (
    COUNTED_EN,
    COUNTED_EN_LOOSE,
    COUNTED_ZH,
    GLUE_ZH,
    MEASURE_ASKED,
    QUESTION_WORDS_ZH,
    WH_ZH,
    WHY_ASKED,
    YES_NO_FRAME,
)
from petrichor_core.text.lang.stopwords import CHINESE
from petrichor_core.text.lang.texts import SEPARATOR, UNDECIDED, YES_NO
from petrichor_core.text.markdown import Line, LineKind, is_table_rule, scan_lines
from petrichor_core.text.prose import Sentence, informative, split_sentences
from petrichor_serving.agent.question import Question, meets
from petrichor_serving.agent.question import parse as parse_question
from petrichor_serving.answer.address import addresses_the_assistant
from petrichor_serving.answer.answer_types import (
    CLAUSE,
    Span,
    asked_type,
    date_parts,
    defined_term,
    defines,
    expand_acronym,
    find_spans,
    holds_answer,
    is_how_to,
    is_yes_no,
    name_start,
)
from petrichor_serving.answer.overlap import search_tokens

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
    start: int = 0
    end: int = 0
    """Where `text` sits in its passage: `passage[start:end] == text`."""
    block: bool = False
    """A whole fenced block or list (quoted for how-to questions: the steps or commands, whole)."""

    @property
    def scored(self) -> str:
        """The text the question is matched against."""
        return self.lead or self.text

    def display(self) -> str:
        """How the answer shows the unit: a table row beside its labels, a block ending on its own line (a
        marker after a closing fence would break it), anything else as quoted."""
        if self.lead or self.block:
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


def answer_units(markdown: str, whole_blocks: bool = False) -> list[Unit]:
    """Quotable units of a passage in order: table rows and short list items whole, prose sentence by
    sentence, code line by line; a sentence ending in a colon also as one unit with the list, table or
    fenced block it introduces (`_with_blocks`); with `whole_blocks`, each fenced block and each list of
    two or more items also as one unit (`_whole_blocks`). A line that addresses the assistant as
    instructions (`addresses_the_assistant`) gives no unit: evidence is data, never the answer's voice."""
    lines = list(scan_lines(markdown))
    spans: list[_Span] = []
    path: list[tuple[int, str]] = []
    long_lines: list[tuple[int, int]] = []
    header = ""
    fenced = False
    for i, scanned in enumerate(lines):
        line, start = scanned.text, scanned.start
        stripped = line.strip()
        if scanned.kind is LineKind.FENCE:
            fenced = not fenced
            if fenced and whole_blocks:
                spans.extend(_whole_block(markdown, lines, i, tuple(t for _, t in path)))
            continue
        if not stripped:
            continue
        if whole_blocks and scanned.kind is LineKind.BODY and _LIST_ITEM.match(line) and not (i and _in_list(lines[i - 1])):
            spans.extend(_whole_block(markdown, lines, i, tuple(t for _, t in path)))
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
        lead_match = _LEAD.match(line)
        assert lead_match is not None  # the pattern matches the empty string too
        lead = lead_match.end()
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
    return [replace(unit, start=span.start, end=span.start + len(unit.text)) for span in spans for unit in [_carried(markdown, lines, line_at, span)]]


def _carried(markdown: str, lines: list[Line], line_at: dict[int, int], span: _Span) -> Unit:
    unit = span.unit
    if unit.code or unit.header or unit.block or not _INTRODUCES.search(unit.text):
        return unit
    nl = markdown.find("\n", span.end)
    if nl < 0 or markdown[span.end : nl].strip():
        return unit  # the colon is not at the end of its line, or the passage ends there
    end = _block_end(lines, line_at.get(nl + 1))
    if end is None or end - span.start > MAX_BLOCK_QUOTE or addresses_the_assistant(markdown[nl + 1 : end]):
        return unit
    return Unit(markdown[span.start : end], unit.heading_path, lead=unit.text)


def _in_list(line: Line) -> bool:
    """A list item or an indented continuation of one."""
    return line.kind is LineKind.BODY and bool(line.text.strip()) and (bool(_LIST_ITEM.match(line.text)) or line.text[:1] in " \t")


def _whole_block(markdown: str, lines: list[Line], i: int, heading_path: tuple[str, ...]) -> list[_Span]:
    """The fenced block or list starting at line `i` as one unit, when it is whole in the passage, spans two
    lines or more, stays within `MAX_BLOCK_QUOTE` and holds no instruction to the assistant."""
    end = _block_end(lines, i)
    start = lines[i].start
    if end is None or end - start > MAX_BLOCK_QUOTE:
        return []
    text = markdown[start:end]
    if text.count("\n") < (3 if lines[i].kind is LineKind.FENCE else 1) or addresses_the_assistant(text):
        return []
    return [_Span(start, end, Unit(text, heading_path, block=True))]


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
_POINTERS_EN = re.compile(r"\s*(?:this|these|that|those|such|it|its|they|their|he|his|she|her)\b", re.I)
"""English demonstrative and personal pronouns: the closed class a sentence opens with when it points back."""


def _points_back(sentence: str) -> bool:
    """A sentence that opens on a pronoun (这个奖项…, 其人…, This option…) says what it says about the sentence
    before it. Chinese: the first word the part-of-speech tagger reads is a pronoun (r); English: the first word
    is a demonstrative or personal pronoun."""
    if _POINTERS_EN.match(sentence):
        return True
    head = sentence.lstrip()[:6]
    if not head or not has_cjk(head[:1]):
        return False
    first = next(iter(init_posseg().cut(head)), None)
    return first is not None and first.flag == "r"


def _whole_sentences(pieces: Sequence[Sentence]) -> Iterator[tuple[int, int]]:
    """The (start, end) of the sentences of one line, rejoined where a Chinese semicolon cut them: the clauses
    after a ； go on about the same subject (1968年改为…；1990年因…改…), and the answer is as often in a later
    clause as in the first. A rejoined sentence stays within twice `SHORT_LINE`, so a long ；-separated list is
    still cut. English `;` keeps cutting: a clause such as "the default is `./data`." is the quote wanted. A
    sentence that points back (`_points_back`) is joined to the one before it."""
    start = None
    for piece, after in zip(pieces, [*pieces[1:], None]):
        start = piece.start if start is None else start
        cut = not piece.text.rstrip(_CLOSERS).endswith("；") and not (after is not None and _points_back(after.text))
        if after is None or cut or after.end - start > 2 * SHORT_LINE[language_of(piece.text)]:
            yield start, piece.end
            start = None


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
ASKING_WEIGHT = 0.7
"""A unit that ends in a question mark asks rather than states (a page restating the question before its
answer): its score is scaled by this. All four dev sets: rgb +2 answers holding gold, the others unchanged."""
_ASKS = re.compile(r"[?？][”’\"'』」）)]*\s*$")
DEFINITION_WEIGHT = 1.5
"""A definition question ("What is X?", "X是什么？") scores a unit that defines X (`defines`: X followed by a
copula or definition verb, or spelt out in a parenthesis) this many times: the unit that says what X is
answers it, not one that only uses X."""


HOW_TO_WEIGHT = 1.5
"""A how-to question ("How do I create a key?", "如何修改端口？") scores the steps, commands and code blocks
whole (a fenced block, a list, a sentence with the block it introduces) of a section whose headings hold a
question word this many times, and counts those heading words as the block's own: the section "Creating a
key" answers with its commands, not a checklist line that only uses the words. rhdh_docs_en, 119 questions
(a real run): of its 32 how-to questions, answers quoting steps or commands 5 → 22; citations from a gold
document 0.865 → 0.874; token F1 against the reference answers 0.393 → 0.392; false not-found 2 → 2.
rgb_zh_reject: no answer moves."""
REASON_WEIGHT = 1.3
"""A why-question scores a unit that gives a reason (`REASON`: because, so that, 因为, 因此…) this many times:
"Why is X used?" is answered by the sentence saying why, not one that only uses X. rhdh_docs_en and
rgb_zh_reject (replayed on recorded evidence): no answer moves."""
_MD_HEADING_LINE = re.compile(r"^(?:#{1,6}|//+|--)\s*\S")
_EMPHASIS_LINE = re.compile(r"^(?:\*\*|__)[^*_]+(?:\*\*|__):?$")
_BARE = re.compile(r"[\W_]+")


def _bare(text: str) -> str:
    return _BARE.sub("", text.casefold())


def heading_only(unit: Unit, title: str) -> bool:
    """Whether a unit is a heading's text and nothing more: a line inside a fence that is a Markdown heading
    or a comment (`# Reciprocal rank fusion`, `# 1. Generate a key`), a line set in bold alone, or a line
    that repeats its article's title or a heading of its section path. Such a line labels an answer; it is
    never one (`score_units` answers with the best body unit of its section instead)."""
    if unit.block or unit.lead or unit.header:
        return False
    text = unit.text.strip()
    if unit.code:
        return bool(_MD_HEADING_LINE.match(text))
    if _EMPHASIS_LINE.match(text):
        return True
    bare = _bare(text)
    return bool(bare) and any(bare == _bare(h) for h in (title, *unit.heading_path) if h)


def _question_terms(question: str) -> list[str]:
    """Content tokens of the question, then the one-character nouns the tagger reads in it (卵 in
    鱼的卵有什么特征): `search_tokens` drops one-character words, yet a one-character noun is often the very
    thing asked about."""
    terms = list(dict.fromkeys(t for t in search_tokens(question) if t not in QUESTION_WORDS_ZH and not WH_ZH.search(t)))
    return terms + list(dict.fromkeys(_one_character_nouns(question)))


def _one_character_nouns(question: str) -> list[str]:
    if not has_cjk(question):
        return []
    return [w.word for w in init_posseg().cut(question) if len(w.word) == 1 and has_cjk(w.word) and w.flag.startswith("n") and w.word not in CHINESE]


def _phrases(text: str) -> set[str]:
    """Character bigrams of the Han runs and consecutive content-word pairs of the Latin text."""
    lowered = GLUE_ZH.sub(" ", WH_ZH.sub(" ", text.lower()))
    grams = {run[i : i + 2] for run in CJK_RUN.findall(lowered) for i in range(len(run) - 1)}
    words = search_tokens(re.sub(CJK_RUN, " ", lowered))
    return grams | {f"{a} {b}" for a, b in zip(words, words[1:])}


def _matches(term: str, text: str, tokens: AbstractSet[str]) -> bool:
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
    lowered when the question asks for a kind of answer (number, date, place) the unit does not hold, when the
    unit is itself a question, and by its evidence's rank; raised when a definition question's unit defines
    the term."""
    wanted = _question_terms(question)
    phrases = _phrases(question)
    kind = asked_type(question)
    named = _Named(question)
    term = defined_term(question)
    expansion = _expansion(term, evidence) if term else None
    how_to = is_how_to(question)
    why = bool(WHY_ASKED.search(question))
    pool: list[tuple[int, Unit, str, set[str], float, str]] = []
    for n, item in enumerate(evidence, start=1):
        title = item.title.lower()
        for unit in answer_units(item.content, whole_blocks=how_to):
            heading = named.heading_points((item.title, *unit.heading_path, unit.header), wanted)
            pool.append((n, unit, unit.scored.lower(), set(search_tokens(unit.scored)), heading, title))
    held = [{t for t in wanted if _matches(t, text, toks)} for _, _, text, toks, _, _ in pool]
    if how_to:  # the steps of a section are about what its heading names: its words count as the block's own
        held = [h | _section_terms(unit, wanted) if unit.block or unit.lead else h for h, (_, unit, *_rest) in zip(held, pool)]
    df = Counter(t for terms in held for t in terms)
    scored: list[Scored] = []
    labels: list[Scored] = []
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
        if term and defines(term, unit.scored, expansion):
            score *= DEFINITION_WEIGHT
        if why and REASON.search(unit.scored):
            score *= REASON_WEIGHT
        if how_to and (unit.block or unit.lead) and _section_terms(unit, wanted):
            score *= HOW_TO_WEIGHT
        if _ASKS.search(unit.scored):
            score *= ASKING_WEIGHT
        if unit.code:
            score *= 0.6
        if len(unit.scored) < 8:
            score *= 0.5
        score /= 1.0 + EVIDENCE_RANK_DECAY * (n - 1)
        (labels if heading_only(unit, evidence[n - 1].title) else scored).append(Scored(score, order, n, unit))
    return _body_for_labels(scored, labels, pool, evidence)


def _section_terms(unit: Unit, wanted: Sequence[str]) -> set[str]:
    """The question terms the headings of a unit's section hold."""
    text = " ".join(unit.heading_path).lower()
    toks = set(search_tokens(text))
    return {t for t in wanted if _matches(t, text, toks)}


def _body_for_labels(
    scored: list[Scored], labels: list[Scored], pool: Sequence[tuple[int, Unit, str, set[str], float, str]], evidence: Sequence[EvidenceText]
) -> list[Scored]:
    """The scored units, best first, with each heading-only unit (`heading_only`) replaced by the body of its
    section at the label's score, when that is higher than the body's own: a question the heading names is
    answered by what the section says under it, which need not repeat the heading's words. A label inside a
    fence (a Markdown heading or a comment in a listing) is followed by the lines under it up to the next
    label, quoted as one slice; any other label by the best scored unit of its section (same passage, same
    heading path), else the first one after it."""
    by_order = {s.order: s for s in scored}
    label_orders = {lb.order for lb in labels}
    for label in sorted(labels, key=lambda s: -s.score):
        if label.unit.code:
            body = _under_code_label(label, pool, label_orders, evidence[label.evidence - 1].content)
            if body is not None:  # the lines under the label, whole, at the better of the two scores
                own = by_order[body.order].score if body.order in by_order else 0.0
                by_order[body.order] = Scored(max(own, label.score), body.order, label.evidence, body.unit)
            continue
        section = [
            order
            for order, (n, unit, *_rest) in enumerate(pool)
            if n == label.evidence and unit.heading_path == label.unit.heading_path and order not in label_orders and not unit.code
        ]
        if not section:
            continue
        after = [o for o in section if o > label.order] or section
        best = max(section, key=lambda o: (by_order[o].score if o in by_order else 0.0, -abs(o - label.order) if o in after else -len(pool)))
        if best in by_order and by_order[best].score >= label.score:
            continue
        by_order[best] = Scored(label.score, best, label.evidence, pool[best][1])
    return sorted(by_order.values(), key=lambda s: (-s.score, s.order))


@dataclass(frozen=True)
class _Body:
    order: int
    unit: Unit


def _under_code_label(label: Scored, pool: Sequence[tuple[int, Unit, str, set[str], float, str]], labels: set[int], passage: str) -> _Body | None:
    """The code lines after a label inside a fence, up to the next label or the fence's end, as one unit
    placed at the first of them (None when the label has nothing under it)."""
    lines: list[tuple[int, Unit]] = []
    for order in range(label.order + 1, len(pool)):
        n, unit = pool[order][0], pool[order][1]
        if n != label.evidence or unit.block:
            continue
        if not unit.code or order in labels or _MD_HEADING_LINE.match(unit.text.strip()):
            break
        if "```" in passage[lines[-1][1].end : unit.start] if lines else "```" in passage[label.unit.end : unit.start]:
            break  # another fence
        lines.append((order, unit))
    if not lines:
        return None
    first, last = lines[0][1], lines[-1][1]
    return _Body(lines[0][0], Unit(passage[first.start : last.end], first.heading_path, code=True, start=first.start, end=last.end))


SPAN_FLOOR = 0.2
"""A short answer may come from a unit scoring at least this share of the best one (the best unit may restate
the question without its answer: "How many old snapshots are kept is set with…"); a count beside the counted
noun ("the newest 5 snapshots") from any of the `SPAN_UNITS` best."""
SPAN_UNITS = 8
"""How many of the best units are searched for a short answer."""


@dataclass(frozen=True)
class ShortAnswer:
    text: str
    """What the answer opens with: a span of the evidence, Yes / No, or the undecided line."""
    unit: Scored | None
    """The unit it was read from (quoted first), None when it comes from no one unit."""


def opening(short: str, lang: str) -> str:
    """The short answer as the answer's first words: "5 — …", "是——…"; a line ending in a colon runs on."""
    return short + (" " if short.endswith((":", "：")) and lang == "en" else "" if short.endswith("：") else SEPARATOR[lang])


def _expansion(term: str, evidence: Sequence[EvidenceText]) -> str | None:
    return next((e for e in (expand_acronym(term, item.content) for item in evidence) if e), None)


def _focus(question: str) -> str | None:
    """The noun a count question counts ("How many snapshots…" → snapshot, "多少个版本" → 版本)."""
    m = COUNTED_EN.search(question) or COUNTED_EN_LOOSE.search(question)
    if m:
        found = search_tokens(m.group(1))
        return found[0] if found else None
    m = COUNTED_ZH.search(question)
    if m:
        words = [w for w in search_tokens(m.group(1)) if w not in QUESTION_WORDS_ZH]
        return words[0] if words else None
    return None


def _attached(focus: str | None, text: str, end: int) -> bool:
    """Whether the counted noun follows the number closely ("5 snapshots", "5 个快照版本")."""
    if not focus:
        return False
    after = text[end : end + 24].lower()
    return focus in after if has_cjk(focus) else focus in search_tokens(" ".join(after.split()[:3]))


def _distance(span: Span, places: Sequence[int]) -> float:
    return min(abs((span.start + span.end) / 2 - p) for p in places)


def _nearest(spans: Sequence[Span], text: str, wanted: Sequence[str]) -> Span:
    """The span closest to where the question's words sit in `text` (the first one when none is there)."""
    lowered = text.lower()
    places = [m.start() for t in wanted for m in re.finditer(re.escape(t), lowered)]
    if not places:
        return spans[0]
    return min(spans, key=lambda sp: (_distance(sp, places), sp.start))


CLEAR_LEADS = True
CLEAR_LEAD = 2.0
"""Within one clause, how much nearer the question's words the chosen span must sit than any other span of the
asked kind (`_clear`)."""


def _clause_of(span: Span, text: str) -> tuple[int, int]:
    bounds = [0, *(m.end() for m in _CLAUSE_CUT.finditer(text)), len(text) + 1]
    return next(((a, b) for a, b in zip(bounds, bounds[1:]) if a <= span.start < b), (0, len(text)))


def _clause_terms(span: Span, text: str, wanted: Sequence[str]) -> frozenset[str]:
    """The question's words in the clause holding `span`."""
    a, b = _clause_of(span, text)
    piece = text[a:b].lower()
    toks = set(search_tokens(piece))
    return frozenset(t for t in wanted if _matches(t, piece, toks))


def _clear(spans: Sequence[Span], chosen: Span, text: str, wanted: Sequence[str]) -> bool:
    """Whether no span of the asked kind in another clause of the unit meets the question as well as `chosen`'s
    clause does: `chosen`'s clause must hold every question word another such clause holds, and more. Where
    clauses meet the question each in their own way ("全长1834米，主桥504米" for a bridge's main span, "在哈尔滨
    开幕，此前三届在北京举办" for this year's venue), a lead-in is a guess. Within one clause, `chosen` must sit
    `CLEAR_LEAD` times nearer the question's words than any other span ("420 workers on two shifts", but not
    "分别在北京、广州")."""
    home = _clause_of(chosen, text)
    others = [sp for sp in spans if sp.text != chosen.text]
    if not others:
        return True
    lowered = text.lower()
    places = [m.start() for t in wanted for m in re.finditer(re.escape(t), lowered)]
    mine = _clause_terms(chosen, text, wanted)
    for sp in others:
        if _clause_of(sp, text) == home:
            if not places or _distance(sp, places) < CLEAR_LEAD * max(_distance(chosen, places), 1.0):
                return False
        elif not _clause_terms(sp, text, wanted) < mine:
            return False
    return True


def _span_answer(
    question: str, kind: str, scored: Sequence[Scored], wanted: Sequence[str], evidence: Sequence[EvidenceText] = ()
) -> ShortAnswer | None:
    """The asked kind's span nearest the question's words, from the best unit holding one; for a count, a
    unit where the number sits beside the counted noun comes first. Spans the question itself names are no
    answer. An English name question takes every name of the best units to the vote (`_agreed_name`):
    capitalisation finds organisations, places and titles beside the person asked for, and the one nearest the
    question's words is as often one of those. All four dev sets: multihop +12 answers holding gold of 218
    (54 → 66), cmrc and rgb unchanged (Chinese questions keep the nearest span), rhdh has no short answers.

    A span is the answer only where it is of the asked kind (`question.parse`'s asked kind: an amount of money
    needs its currency, a version a dotted number, a count the asked measure word and no date part), in a
    unit that contradicts none of the question's constraints (`_meets_constraints`) and in the clause holding
    the most question words (`_in_asked_clause`); otherwise there is no lead-in. rgb_zh_reject (a real run):
    wrong lead-ins on the 40 answerable questions 13 → 10, lead-ins on answered unanswerable ones 24 → 18,
    answers holding gold 35 → 36."""
    best = scored[0].score
    focus = _focus(question) if kind == "number" else None
    q = question.lower()
    parsed = parse_question(question)
    measure = _measure_word(question) if kind == "number" else None
    options: list[tuple[bool, Scored, Span]] = []
    clear: dict[int, bool] = {}
    for s in scored[:SPAN_UNITS]:
        text = s.unit.scored
        if not _meets_constraints(parsed, s, evidence):
            continue
        spans = [
            sp
            for sp in find_spans(kind, text)
            if _POSSESSIVE.sub("", sp.text).lower() not in q
            and not (
                kind in ("number", "money") and re.sub(r"\D", "", sp.text) and re.sub(r"\D", "", sp.text) in re.sub(r"\D", " ", question).split()
            )
        ]
        if kind == "number":  # a year, month or day is a date's part, not a count (unless time is counted)
            dated = date_parts(text, question)
            spans = [sp for sp in spans if not any(a <= sp.start < b for a, b in dated)]
        if measure:
            spans = [sp for sp in spans if _measured(sp, text, measure)]
        of_kind = spans
        spans = _in_asked_clause(spans, text, wanted)
        if not spans:
            continue
        attached = [sp for sp in spans if _attached(focus, text, sp.end)]
        if not attached and s.score < best * SPAN_FLOOR:
            continue  # only a count beside its counted noun is taken from a unit this far below the best
        if kind in NAME_KINDS and not has_cjk(question):
            options.extend((False, s, sp) for sp in spans)  # every capitalised run stands: `_agreed_name` votes
            continue
        chosen = _nearest(attached or spans, text, wanted)
        options.append((bool(attached), s, chosen))
        clear[id(s)] = _clear(of_kind, chosen, text, wanted)
    if not options:
        return None
    if kind in NAME_KINDS:
        return _agreed_name(options, evidence)
    _, unit, span = max(options, key=lambda o: (o[0], o[1].score))
    if CLEAR_LEADS and not clear[id(unit)]:
        return None  # the unit that would answer names several of the asked kind: no guess, nor another unit's span
    return ShortAnswer(span.text, unit)


NAME_KINDS = ("person", "entity")
_POSSESSIVE = re.compile(r"[’']s$")
_LATIN_NAME = re.compile(r"\b[A-Z][\w’'.-]*(?:\s+[A-Z][\w’'.-]*)*")


def _latin_runs(evidence: Sequence[EvidenceText]) -> set[str]:
    """Every capitalised run the passages and their titles write, once per answer (`_full_name` looks names up here)."""
    return {
        _POSSESSIVE.sub("", text[name_start(text, m.start(), m.end()) : m.end()])
        for item in evidence
        for text in (item.title, item.content)
        for m in _LATIN_NAME.finditer(text)
    }


def _full_name(name: str, runs: set[str]) -> str:
    """The fullest way the evidence writes a Latin name: the longest capitalised run ending in it as whole
    words (`Bankman-Fried` → `Sam Bankman-Fried` where any passage or its title says so); Han names are kept
    as found."""
    if has_cjk(name) or not name[:1].isupper():
        return name
    tail = re.compile(rf"(?:^|\s){re.escape(name)}$")
    return max((r for r in runs if tail.search(r)), key=len, default=name)


def _agreed_name(options: Sequence[tuple[bool, Scored, Span]], evidence: Sequence[EvidenceText]) -> ShortAnswer:
    """A name question's answer: among the candidate names (each in its fullest written form), the one the
    most read passages mention, then the best unit's. A question that gathers facts from several passages is
    about the name they share; one passage's name beside the point is mentioned once."""

    def support(name: str) -> int:
        # a Latin name is written whole once and by its last word after ("Sam Bankman-Fried", then "Bankman-Fried")
        said = name if has_cjk(name) else name.split()[-1]
        return sum(said in item.content for item in evidence)

    runs = _latin_runs(evidence)
    named = [(support(full), o[1].score, full, o[1]) for o in options for full in [_full_name(_POSSESSIVE.sub("", o[2].text), runs)]]
    _, _, full, unit = max(named, key=lambda n: (n[0], n[1]))
    return ShortAnswer(full, unit)


def _fullest(clauses: Sequence[str], wanted: Sequence[str]) -> list[str]:
    """The clauses holding the most of the question's words: where the claim itself is stated."""
    counts = [sum(_matches(t, c, set(search_tokens(c))) for t in wanted) for c in clauses]
    top = max(counts, default=0)
    return [c for c, n in zip(clauses, counts) if n == top]


def _other_state(question: str, clauses: Sequence[str]) -> bool:
    """Whether the question asks if something is in one state (on, enabled, 开着, 启用) and the clauses stating
    the claim (`_fullest`) put it in the other one only (off, disabled, 关闭, 禁用): the claim is then the question's negation. The state
    words are stopwords to the claim's words, so without this "默认是开着的吗" read "默认处于关闭状态" as Yes."""
    for asked, other in ((STATE_ON, STATE_OFF), (STATE_OFF, STATE_ON)):
        if asked.search(question) and not other.search(question):
            said = " ".join(clauses)
            return bool(other.search(said)) and not asked.search(said)
    return False


def _yes_no(question: str, scored: Sequence[Scored], wanted: Sequence[str], lang: str) -> ShortAnswer:
    """Yes or No when one unit states or negates the claim: it holds every content word of the question, and
    a negation cue in the clause holding them says No (unless the question negates too). Otherwise the
    undecided line: which sentence bears on it, no guess."""
    asked_negated = bool(NEGATION.search(YES_NO_FRAME.sub(" ", question)))  # 是否 / 是不是 frame the question, negate nothing
    best = scored[0].score
    for s in scored[:SPAN_UNITS]:
        if s.score < best * KEEP_RATIO:
            break
        text = s.unit.scored.lower()
        toks = set(search_tokens(text))
        if not wanted or not all(_matches(t, text, toks) for t in wanted):
            continue
        clauses = [c for c in CLAUSE.split(text) if any(_matches(t, c, set(search_tokens(c))) for t in wanted)]
        negated = any(NEGATION.search(c) for c in clauses) != _other_state(question, _fullest(clauses, wanted))
        return ShortAnswer(YES_NO[lang][negated != asked_negated], s)
    return ShortAnswer(UNDECIDED[lang], scored[0])


_CLAUSE_CUT = re.compile(r"[,;:，；：。！？!?\n]")
_FRONTED = 12
"""A clause this short before the clause holding the question's words is its fronted adverbial ("2021年，…",
"In 2019, …"): a span there belongs to the clause after it."""


def _in_asked_clause(spans: Sequence[Span], text: str, wanted: Sequence[str]) -> list[Span]:
    """The spans whose clause holds the most of the question's words (a short clause fronted to a clause
    counts as that clause): a span of another clause answers another statement. None when no clause holding
    a span holds a question word. (Requiring the span in the unit's best clause outright moved more leads
    to other units than it fixed: rgb_zh_reject answerable, 12 wrong leads of 38 against 10.)"""
    bounds = [0, *(m.end() for m in _CLAUSE_CUT.finditer(text)), len(text) + 1]
    clauses = [(a, b) for a, b in zip(bounds, bounds[1:]) if a < b]

    def held(a: int, b: int) -> int:
        piece = text[a:b].lower()
        toks = set(search_tokens(piece))
        return sum(_matches(t, piece, toks) for t in wanted)

    counts = [held(a, b) for a, b in clauses]

    def weight(span: Span) -> int:
        for i, (a, b) in enumerate(clauses):
            if a <= span.start < b:
                fronted = counts[i + 1] if not counts[i] and b - a <= _FRONTED and i + 1 < len(clauses) else 0
                return counts[i] or fronted
        return 0

    weights = [weight(sp) for sp in spans]
    top = max(weights, default=0)
    return [sp for sp, w in zip(spans, weights) if w == top and top > 0]


def _meets_constraints(parsed: Question, s: Scored, evidence: Sequence[EvidenceText]) -> bool:
    """Whether the unit, read with its article's title and section path, contradicts nothing the question pins
    down (a year, a date, a number, a quoted term or a name): none of them is spoken of with another value.
    Requiring each to be stated as well moved leads to worse spans of other units (rgb_zh_reject answerable:
    right leads 17 → 15, wrong ones unchanged at 10)."""
    if not parsed.constraints:
        return True
    item = evidence[s.evidence - 1] if evidence else None
    context = " ".join([item.title if item else "", *(item.heading_path if item else ()), *s.unit.heading_path, s.unit.scored])
    return all(meets(c, context) != "conflict" for c in parsed.constraints)


def _measure_word(question: str) -> str | None:
    """The measure word a Chinese count question asks with ("多少人" 人, "几项" 项), None otherwise."""
    m = MEASURE_ASKED.search(question)
    return m.group(1) if m and m.group(1) != GENERIC_MEASURE_WORD else None


def _measured(span: Span, text: str, measure: str) -> bool:
    """A count span that carries a measure word carries the asked one ("七项" does not answer "多少人")."""
    said = UNIT_AT_END.search(span.text)
    return not said or said.group(0) == measure


def short_answer(question: str, scored: Sequence[Scored], evidence: Sequence[EvidenceText]) -> ShortAnswer | None:
    """What the answer opens with, if the question asks for something short: a yes/no verdict, an acronym's
    spelt-out form for "What is X?", or a span of the asked kind (`short_kind`)."""
    if not scored:
        return None
    lang = language_of(question)
    wanted = _question_terms(question)
    if is_yes_no(question):
        return _yes_no(question, scored, wanted, lang)
    term = defined_term(question)
    if term:
        expansion = _expansion(term, evidence) if lang == "en" else None  # initials spell Latin words only
        return ShortAnswer(f"{term}: {expansion}", None) if expansion else None
    kind = parse_question(question).asked
    return _span_answer(question, kind, scored, wanted, evidence) if kind else None


def _prose(unit: Unit) -> bool:
    return not (unit.code or unit.header or unit.lead)


def _next_to(a: Scored, b: Scored, evidence: Sequence[EvidenceText]) -> bool:
    """Two prose units of one paragraph with nothing but white space between them: one statement, quoted whole.
    All four dev sets, joined against quoted apart: citation precision +3 points on cmrc, rgb and multihop,
    answers holding gold unchanged."""
    if a.evidence != b.evidence or not (_prose(a.unit) and _prose(b.unit)):
        return False
    first, second = sorted((a.unit, b.unit), key=lambda u: u.start)
    gap = evidence[a.evidence - 1].content[first.end : second.start]
    return first.end <= second.start and not gap.strip() and gap.count("\n") < 2


def _joined(picked: list[tuple[int, Scored]], evidence: Sequence[EvidenceText]) -> list[tuple[int, Scored]]:
    """The picked units with each run of neighbours (`_next_to`) quoted as one contiguous slice of its passage,
    at the best rank and score of the run, in the place of its first unit."""
    out: list[tuple[int, Scored]] = []
    for rank, s in sorted(picked, key=lambda p: p[1].order):
        if out and _next_to(out[-1][1], s, evidence):
            prev_rank, prev = out[-1]
            text = evidence[s.evidence - 1].content[prev.unit.start : s.unit.end]
            unit = Unit(text, prev.unit.heading_path, start=prev.unit.start, end=s.unit.end)
            out[-1] = (min(rank, prev_rank), Scored(max(s.score, prev.score), prev.order if prev_rank < rank else s.order, s.evidence, unit))
        else:
            out.append((rank, s))
    return sorted(out)


def _adds(s: Scored, picked: Sequence[Scored], wanted: Sequence[str], evidence: Sequence[EvidenceText]) -> bool:
    """Whether a further quote holds a question word, other than its article's title, that no picked one holds:
    a second quote that only restates the words of the first cites beside the point more often than it
    carries the answer. All four dev sets, with `_next_to` and `ASKING_WEIGHT` (`petrichor eval --answers`):
    citation precision cmrc 0.789 → 0.867, rgb 0.666 → 0.782, multihop 0.777 → 0.840, rhdh 0.006 → 0.007;
    answers holding gold cmrc −1 question of 187, rgb +7 of 214, multihop ±0."""

    def held(x: Scored) -> set[str]:
        text = x.unit.scored.lower()
        tokens = set(search_tokens(text))
        title = evidence[x.evidence - 1].title.lower()
        return {t for t in wanted if t not in title and _matches(t, text, tokens)}

    have = set().union(*(held(p) for p in picked))
    return bool(held(s) - have)


def answer(question: str, evidence: Sequence[EvidenceText]) -> dict[str, Any]:
    """The short answer when the question asks for one (`short_answer`), then up to three passages with the
    best scores (`score_units`), each cited; or an explicit not-found. A passage after the first joins only if
    it holds a question word the others lack (`_adds`) or sits next to one of them (`_next_to`: neighbours are
    quoted as one slice).

    Each citation carries its `rank` (1 = best scored), its `score` and the `text` the answer shows for it,
    so a caller can keep fewer (the agent's fact plan keeps the passages close to the best). The unit the short
    answer was read from is quoted first (rank 1, at the best score: it holds what was asked), whatever its
    own score; `short_answer` is the short answer alone and `opening` the text the answer starts with before its
    quotes ("" when none), for callers that compose their own text."""
    lang = language_of(question)
    scored = score_units(question, evidence)
    if not scored:
        return {"answer": NOT_FOUND[lang], "citations": []}
    short = short_answer(question, scored, evidence)
    best = scored[0].score
    wanted = _question_terms(question)
    picked: list[Scored] = [short.unit] if short and short.unit else []
    for s in scored:
        if s.score < best * KEEP_RATIO or len(picked) == MAX_ANSWER_UNITS:
            break
        if any(s.unit.text in other.unit.text or other.unit.text in s.unit.text for other in picked):
            continue
        if not picked or any(_next_to(s, other, evidence) for other in picked) or _adds(s, picked, wanted, evidence):
            picked.append(s)
    chosen = _joined(list(enumerate(picked, 1)), evidence)
    # the unit holding the short answer first, the rest in document order
    first = short.unit.order if short and short.unit else None
    chosen.sort(key=lambda c: (c[1].order != first, c[1].order))
    joiner = "" if lang == "zh" else " "
    text = joiner.join(f"{s.unit.display()} [{s.evidence}]" for _, s in chosen)
    lead = opening(short.text, lang) if short else ""
    citations = [
        {
            "marker": s.evidence,
            "evidence_id": evidence[s.evidence - 1].evidence_id,
            "quote": s.unit.text,
            "text": s.unit.display(),
            "rank": rank,
            "score": round(max(s.score, best) if s.order == first else s.score, 4),
        }
        for rank, s in chosen
    ]
    return {"answer": lead + text, "citations": citations, "short_answer": short.text if short else None, "opening": lead}
