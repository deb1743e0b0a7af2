"""Follow-up questions: a second question that leans on the first, asked with the first and its answer as history.

Constructed ones come from a set's own questions: two questions on the same gold evidence (a gold section where
the set names them, else the gold document; rhdh has several per passage). A question alone on its evidence
(cmrc's dev half has one per paragraph) that names its document's title follows a question on what the title
is ("介绍一下X。" / "What is X?"). The subject of the
second is what it shares with the first: the document title when both name it, else the shared phrase that
is rarest among the set's questions (so "Red Hat Developer Hub", in most rhdh questions, loses to "Ansible
plug-ins"). That subject is replaced by a pronoun (it / that, 它) or, at the head of a Chinese question,
dropped, as people write. Hand-written ones live in a set's `followups.jsonl`:
`{"qid", "first", "question", "answer" | "answers_all", "gold_doc_ids", "lang"?}`.

A follow-up hits when its answer holds a gold short answer, or, where the question has none, cites a gold
document.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from petrichor.evaluation.dataset import EvalDoc, EvalQuestion, parse_question
from petrichor_core.text.lang import CJK_CLASS
from petrichor_core.text.lang.stopwords import CHINESE, ENGLISH

FILE = "followups.jsonl"
MAX_SHARE = 0.1
"""A subject is held by at most a tenth of the set's questions (or by the pair alone): "Red Hat Developer Hub",
in most rhdh questions, names the product every question is about, not the subject of this one."""
MIN_LEFT = {"zh": 4, "en": 2}
"""What the follow-up must keep besides the pronoun: Han characters (zh) or content words (en); less is no question."""
_HAN = re.compile(f"[{CJK_CLASS}]|[A-Za-z0-9]+")
"""Chinese units: each Han character, and each run of Latin letters or digits (a year, a model name) whole."""
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+.\-_/]*[A-Za-z0-9]|[A-Za-z0-9]")
_DETERMINERS = frozenset("the a an this that these those your my our their its".split())


@dataclass(frozen=True)
class FollowUp:
    qid: str
    first: EvalQuestion
    """Asked first, without history; its answer becomes the follow-up's history."""
    question: EvalQuestion
    """The follow-up as asked (its gold is the original second question's)."""
    original: str = ""
    """The second question before its subject was replaced (constructed follow-ups)."""
    subject: str = ""
    """What was replaced or dropped."""


def evidence_key(question: EvalQuestion) -> tuple[str, ...]:
    """What two questions must share to be a pair: the first gold section where the set names them, else the
    first gold document."""
    if question.gold_sections:
        s = question.gold_sections[0]
        return (s.doc_id, *s.heading_path)
    return question.gold_doc_ids[:1]


# ------------------------------------------------------------------------------------------- phrases


@dataclass(frozen=True)
class _Span:
    text: str
    start: int
    end: int


def _units(text: str, lang: str) -> list[_Span]:
    """Han characters (zh) or words (en), with their offsets in `text`."""
    pattern = _HAN if lang == "zh" else _WORD
    return [_Span(m.group(0), m.start(), m.end()) for m in pattern.finditer(text)]


def _key(unit: str, lang: str) -> str:
    return unit if lang == "zh" else unit.lower()


def _stop(unit: str, lang: str) -> bool:
    return unit in CHINESE if lang == "zh" else unit.lower() in ENGLISH


def shared_phrases(a: str, b: str, lang: str) -> list[tuple[int, int]]:
    """Runs of units that `a` and `b` share, as unit ranges `[i, j)` of `b`: every maximal common run,
    trimmed of stopwords at either end (English; a Chinese run keeps its characters)."""
    ua, ub = [_key(u.text, lang) for u in _units(a, lang)], [_key(u.text, lang) for u in _units(b, lang)]
    out: set[tuple[int, int]] = set()
    for i in range(len(ua)):
        for j in range(len(ub)):
            if ua[i] != ub[j] or (i and j and ua[i - 1] == ub[j - 1]):
                continue  # not the start of a maximal run
            n = 0
            while i + n < len(ua) and j + n < len(ub) and ua[i + n] == ub[j + n]:
                n += 1
            start, end = j, j + n
            if lang == "en":
                while start < end and _stop(ub[start], lang):
                    start += 1
                while end > start and _stop(ub[end - 1], lang):
                    end -= 1
            if end > start:
                out.add((start, end))
    return sorted(out)


class PhraseRarity:
    """How rare a phrase is among a set's questions: log((N + 1) / (df + 1)), df the questions holding it."""

    def __init__(self, questions: Sequence[str]):
        self._texts = [q.lower() for q in questions]
        self._cache: dict[str, int] = {}

    def held_by(self, phrase: str) -> int:
        """How many of the questions hold `phrase` (case aside)."""
        phrase = phrase.lower()
        if phrase not in self._cache:
            self._cache[phrase] = sum(phrase in t for t in self._texts)
        return self._cache[phrase]

    def weight(self, phrase: str) -> float:
        return math.log((len(self._texts) + 1) / (self.held_by(phrase) + 1))

    def rare(self, phrase: str) -> bool:
        """Held by at most `MAX_SHARE` of the questions, or by two at most."""
        return self.held_by(phrase) <= max(2, MAX_SHARE * len(self._texts))


def subject_span(first: str, second: str, lang: str, rarity: PhraseRarity, title: str = "") -> tuple[int, int] | None:
    """Character offsets in `second` of what it shares with `first` as its subject: the title when both hold
        it, else the shared phrase whose units are rarest in sum (at least two Chinese units; two content words, or
    one capitalised mid-sentence, in English);
        None when they share nothing of the kind."""
    if title and title in first and title in second and title != second:
        start = second.index(title)
        return start, start + len(title)
    units = _units(second, lang)
    best: tuple[float, int, int] | None = None
    for i, j in shared_phrases(first, second, lang):
        span = units[i:j]
        content = [u for u in span if not _stop(u.text, lang)]
        if (lang == "zh" and len(span) < 2) or not content:
            continue
        if lang == "en" and len(content) < 2 and not (span[0].start and content[0].text[:1].isupper()):
            continue  # one lower-case word ("start", "defense") is a topic, not a subject to refer back to
        text = second[span[0].start : span[-1].end]
        score = rarity.weight(text) * (len(text) if lang == "zh" else len(content))
        if rarity.rare(text) and (best is None or score > best[0]):
            best = (score, span[0].start, span[-1].end)
    return (best[1], best[2]) if best else None


def _choice(qid: str, options: int) -> int:
    """A stable choice among `options` per question (crc32 of its qid), so reruns ask the same follow-ups."""
    return zlib.crc32(qid.encode("utf-8")) % options


def pronoun_for(second: str, start: int, end: int, lang: str, qid: str) -> str:
    """`second` with `[start, end)` replaced as a person writing a follow-up would: "it" or "that" (a
    possessive "X's" becomes "its", a determiner before X goes with it); in Chinese "它", or nothing when the
    subject opens the question (with a "的" after it)."""
    head, tail = second[:start], second[end:]
    if lang == "zh":
        if not head.strip() and _choice(qid, 2):
            return tail[1:] if tail.startswith("的") else tail
        return head + "它" + tail
    words = head.rstrip().split(" ")
    if words and words[-1].lower() in _DETERMINERS:
        head = " ".join(words[:-1]) + (" " if len(words) > 1 else "")
    if tail.startswith(("'s", "’s")):
        pronoun, tail = "its", tail[2:]
    else:
        pronoun = ("it", "that")[_choice(qid, 2)]
    if not head.strip():
        pronoun = pronoun.capitalize()
    return f"{head}{pronoun}{tail}"


def _enough_left(text: str, lang: str) -> bool:
    units = [u.text for u in _units(text, lang) if not _stop(u.text, lang)]
    return len(units) >= MIN_LEFT[lang]


def construct(questions: Sequence[EvalQuestion], docs: Sequence[EvalDoc], count: int) -> tuple[FollowUp, ...]:
    """Up to `count` follow-ups from pairs of questions on the same evidence (`evidence_key`), taken in set
    order, each question in one pair at most; pairs whose second question shares no subject with the first,
    or keeps too little once it is replaced, are passed over."""
    if count <= 0:
        return ()
    titles = {d.doc_id: d.title for d in docs}
    rarity = PhraseRarity([q.question for q in questions])
    groups: dict[tuple[str, ...], list[EvalQuestion]] = {}
    for q in questions:
        if q.has_gold:
            groups.setdefault(evidence_key(q), []).append(q)
    out: list[FollowUp] = []
    used: set[str] = set()
    for q in questions:
        if len(out) == count:
            break
        if q.qid in used or not q.has_gold:
            continue
        partner = next((p for p in groups[evidence_key(q)] if p.qid != q.qid and p.qid not in used and p.question != q.question), None)
        title = titles.get(q.gold_doc_ids[0], "") if q.gold_doc_ids else ""
        if partner is None:
            # alone on its evidence: the first question asks what its document's subject is, when it names it
            if not title or title not in q.question or title == q.question.strip():
                continue
            q, partner = opening_question(q, title), q
        span = subject_span(q.question, partner.question, partner.lang, rarity, title)
        if span is None:
            continue
        asked = pronoun_for(partner.question, *span, partner.lang, partner.qid)
        if not _enough_left(asked, partner.lang):
            continue
        used.update((q.qid, partner.qid))
        out.append(FollowUp(f"{q.qid}->{partner.qid}", q, replace(partner, question=asked), partner.question, partner.question[span[0] : span[1]]))
    return tuple(out)


OPENING = {"zh": "介绍一下{title}。", "en": "What is {title}?"}


def opening_question(question: EvalQuestion, title: str) -> EvalQuestion:
    """What a reader asks before a detail of a document's subject: what the subject is (its gold: the document)."""
    return EvalQuestion(
        qid=f"{question.qid}:opening",
        question=OPENING[question.lang].format(title=title),
        gold_doc_ids=question.gold_doc_ids,
        lang=question.lang,
    )


def load_written(directory: Path) -> tuple[FollowUp, ...]:
    """The set's hand-written follow-ups (`followups.jsonl`), none when it has no such file."""
    path = Path(directory) / FILE
    if not path.is_file():
        return ()
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [k for k in ("qid", "first", "question") if not row.get(k)]
        if missing or not (row.get("gold_doc_ids") or row.get("answers_all") or row.get("answer")):
            raise ValueError(
                f"{path}:{n}: a follow-up needs qid, first, question and a gold answer or gold_doc_ids (missing {', '.join(missing) or 'gold'})"
            )
        second = parse_question(row)
        first = EvalQuestion(qid=f"{second.qid}:first", question=str(row["first"]), gold_doc_ids=second.gold_doc_ids, lang=second.lang)
        out.append(FollowUp(second.qid, first, second))
    return tuple(out)
