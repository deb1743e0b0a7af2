"""In-domain unanswerable questions made from answerable ones: a corpus variant without their gold evidence.

A sample of a set's answerable questions, evenly spread, loses its evidence: a question with gold sections
(rhdh) loses those sections from its guides, the rest of each guide kept; one without (cmrc) loses its gold
documents (the paragraph). The corpus still talks about the subject, so these are the near misses a user asks.

A sampled question whose gold passage is still found in the variant (a passage repeated in another guide) is
passed over for the next one, so every sampled question is truly unanswerable there. Any other question
whose every gold passage went with it (several questions share a passage) joins them as unanswerable; every
question whose evidence is still there stays answerable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from petrichor.evaluation.dataset import Dataset, EvalDoc, EvalQuestion
from petrichor.evaluation.metrics import GoldPassage, shingles

SUBSET = "leave-gold-out"
"""The `subset` of the questions this makes unanswerable: in-domain, like a set's own null queries."""
SUFFIX = ".leave-gold-out"
"""The variant is built beside its set: `<PETRICHOR_DATA>/eval/<set>.leave-gold-out/`."""

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    """Lines `[start, end)` of a Markdown text: a heading line and its own text, up to the next heading of any
    level (a subsection is a section of its own)."""

    path: tuple[str, ...]
    start: int
    end: int


def sections(markdown: str) -> list[Section]:
    """Every ATX-heading section of `markdown`, with its heading path; headings inside code fences are text."""
    lines = markdown.splitlines()
    found: list[tuple[int, int, tuple[str, ...]]] = []  # (line, level, path)
    stack: list[tuple[int, str]] = []
    fence = ""
    for n, line in enumerate(lines):
        m = _FENCE.match(line)
        if m:
            marker = m.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker) :].strip():
                fence = ""
            continue
        if fence:
            continue
        h = _HEADING.match(line)
        if not h:
            continue
        level = len(h.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, h.group(2).strip()))
        found.append((n, level, tuple(t for _, t in stack)))
    ends = [n for n, _, _ in found[1:]] + [len(lines)]
    return [Section(path, start, end) for (start, _, path), end in zip(found, ends)]


def drop_sections(markdown: str, gold_paths: Sequence[Sequence[str]]) -> str:
    """`markdown` without the own text of every section whose heading path ends with one of `gold_paths`: a
    gold section's subsections stay unless they are gold too (a chapter-level gold path would take most of a
    guide with it; whether the evidence really went is checked on the passage)."""
    lines = markdown.splitlines()
    gone = [False] * len(lines)
    for s in sections(markdown):
        if any(len(g) and len(s.path) >= len(g) and s.path[-len(g) :] == tuple(g) for g in gold_paths):
            for n in range(s.start, s.end):
                gone[n] = True
    return "\n".join(line for line, g in zip(lines, gone) if not g)


@dataclass(frozen=True)
class LeaveGoldOut:
    docs: tuple[EvalDoc, ...]
    """The variant corpus: the set's documents, less the sampled questions' gold documents or sections."""
    answerable: tuple[EvalQuestion, ...]
    """The questions whose evidence is still in the variant."""
    unanswerable: tuple[EvalQuestion, ...]
    """The sampled questions and those that lost their evidence with them, `subset` = `SUBSET`."""
    sampled: tuple[str, ...]
    """The qids sampled (the rest of `unanswerable` shares their evidence)."""
    passed_over: int
    """Candidates whose gold passage is still found without their gold evidence (repeated elsewhere): left
    answerable."""


def _remove(docs: dict[str, EvalDoc], question: EvalQuestion) -> dict[str, EvalDoc]:
    """`docs` without `question`'s gold evidence: its gold sections where it names them, else its gold documents."""
    out = dict(docs)
    if question.gold_sections:
        for doc_id in dict.fromkeys(s.doc_id for s in question.gold_sections):
            if doc_id in out:
                paths = [s.heading_path for s in question.gold_sections if s.doc_id == doc_id]
                out[doc_id] = replace(out[doc_id], content=drop_sections(out[doc_id].content, paths))
    else:
        for doc_id in question.gold_doc_ids:
            out.pop(doc_id, None)
    return out


class Evidence:
    """Whether a question's gold passages are found in a corpus, by the chunk-level test over whole documents;
    the documents' word shingles are cached by text, since a variant changes few of them."""

    def __init__(self) -> None:
        self._grams: dict[str, set[tuple[str, ...]]] = {}
        self._passages: dict[str, tuple[GoldPassage, ...]] = {}

    def _doc_grams(self, text: str) -> set[tuple[str, ...]]:
        grams = self._grams.get(text)
        if grams is None:
            grams = self._grams[text] = shingles(text)
        return grams

    def left(self, question: EvalQuestion, docs: dict[str, EvalDoc], anywhere: bool = False) -> bool:
        """Whether one of `question`'s gold passages is found in one of its gold documents (in any document
        with `anywhere`); without gold passages, whether one of its gold documents is there."""
        if not question.gold_passages:
            return any(d in docs for d in question.gold_doc_ids)
        passages = self._passages.get(question.qid)
        if passages is None:
            passages = self._passages[question.qid] = tuple(GoldPassage.of(p, question.lang) for p in question.gold_passages)
        where = docs.values() if anywhere else [docs[d] for d in question.gold_doc_ids if d in docs]
        for doc in where:
            text = f"{doc.title}\n{doc.content}"
            grams = self._doc_grams(text) if question.lang != "zh" else None
            if any(p.found_in(text, grams) for p in passages):
                return True
        return False


def _radical_inverse(k: int) -> float:
    """The k-th point of the base-2 van der Corput sequence: 0, 1/2, 1/4, 3/4, 1/8, …"""
    out, scale = 0.0, 0.5
    while k:
        out += scale * (k & 1)
        k >>= 1
        scale /= 2
    return out


def evenly_spread(items: Sequence[EvalQuestion]) -> list[EvalQuestion]:
    """Every item, reordered so that every prefix is spread evenly over the set (the van der Corput order of
    their positions): however many are taken, and after candidates are passed over, they cover the whole set."""
    n = len(items)
    order: list[int] = []
    seen: set[int] = set()
    k = 0
    while len(order) < n:
        i = min(n - 1, int(_radical_inverse(k) * n))
        if i not in seen:
            seen.add(i)
            order.append(i)
        k += 1
        if k > 64 * n:  # the tail is sparse in the sequence; the rest in order
            order += [j for j in range(n) if j not in seen]
            break
    return [items[i] for i in order]


def leave_gold_out(dataset: Dataset, count: int) -> LeaveGoldOut:
    """Questions, evenly spread, made unanswerable by removing their gold evidence, until `count` questions
    have lost theirs (a passage several questions share takes all of them; the last one may go past `count`)."""
    if count <= 0:
        raise ValueError("the leave-gold-out sample needs at least one question")
    check = Evidence()
    docs = {d.doc_id: d for d in dataset.docs}
    lost: set[str] = set()
    sampled: list[str] = []
    passed = 0
    # where the set names gold sections, only questions that name them: the rest of their guide stays
    by_section = any(q.gold_sections for q in dataset.questions)
    candidates = [q for q in dataset.questions if q.gold_sections or not by_section]
    for question in evenly_spread(candidates):
        if len(lost) >= count:
            break
        if question.qid in lost:
            continue  # its evidence already went with an earlier sample
        after = _remove(docs, question)
        if check.left(question, after, anywhere=True):
            passed += 1
            continue
        changed = {d for d in docs if d not in after or after[d] is not docs[d]}
        docs = after
        sampled.append(question.qid)
        lost.update(q.qid for q in dataset.questions if q.qid not in lost and set(q.gold_doc_ids) & changed and not check.left(q, docs))
        lost.add(question.qid)
    variant = tuple(docs[d.doc_id] for d in dataset.docs if d.doc_id in docs)
    answerable = tuple(q for q in dataset.questions if q.qid not in lost)
    unanswerable = tuple(replace(q, subset=SUBSET) for q in dataset.questions if q.qid in lost)
    return LeaveGoldOut(variant, answerable, unanswerable, tuple(sampled), passed)


def variant_dataset(dataset: Dataset, count: int) -> tuple[Dataset, LeaveGoldOut]:
    """The set as it is evaluated on its leave-gold-out corpus: the answerable questions that kept their
    evidence, and the set's own unanswerable ones with the left-out questions after them."""
    made = leave_gold_out(dataset, count)
    return (
        Dataset(
            dataset.name + SUFFIX,
            made.docs,
            made.answerable,
            skipped=dataset.skipped,
            unanswerable=dataset.unanswerable + made.unanswerable,
        ),
        made,
    )
