"""Follow-up questions: the conversation's previous turn informs retrieval, on both answering paths.

A question is a follow-up when it leans on the turn before it, which shows in its structure:

- it holds an anaphor: a third-person pronoun or demonstrative (`ANAPHORS`, a closed grammatical class in
  English and Chinese, not topic words) pointing at something said earlier ("What is its default
  constant?", "How do I change that?", "它的常数默认是多少？"), and it names nothing before the anaphor
  that the anaphor could point at instead ("What is the default port and how do I change it?" stands
  alone). Grammar decides for the words that do other work too ("that" joining a clause, the "it" of "is
  it possible to", 该 meaning "should");
- or it is elliptical: "what about 2021?", "上海呢？" ask the previous question again with one thing changed;
- or it names no subject of its own: none of its content words, years and numbers aside, is a word of any
  title or heading, while the previous user turn's words are ("怎么改？", "默认是多少？" after "RRF 是什么？").

The resolved query is the question as typed, every word kept, followed by what the previous turn was about:
its constraints (`question.Constraint`: years, dates, numbers, names, quoted terms) unless the follow-up
replaces them (a year, date or number of its own replaces one of the same kind; an elliptical follow-up
replaces names too), then its words that the previous answer's passages hold, those naming their article
and section first (else all its words, title and heading words first).

The history carries the previous answer as text on every endpoint (`/api/assistant/chat`'s `history`,
`/v1/chat/completions`' assistant messages: citations travel in an extension field clients do not send
back), so the chunks it quoted are found by their text: the pieces between its `[n]` markers, its short
lead-in and a table row's labels aside, verbatim. Those chunks are read first on both paths: the article and
section the last answer came from are the first place to look, without excluding what the search finds.
A previous turn that was itself a follow-up is read as resolved. A question that stands alone, and any
question without history, is searched as asked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from petrichor_core.text.lang import CJK, has_cjk, init_posseg
from petrichor_core.text.lang.question_words import ELLIPTICAL
from petrichor_core.text.lang.stopwords import ANAPHOR_SHOULD, ANAPHORS, FUNCTION_WORDS
from petrichor_serving.agent import structure, tools
from petrichor_serving.agent.question import CONSTRAINT_KINDS, Constraint, Question, parse
from petrichor_serving.agent.words import surface_words
from petrichor_serving.recall.access import Scope
from petrichor_serving.snapshot import Snapshot

MAX_ADDED_TERMS = 8
"""At most this many words of the previous turn join the query: enough for a subject and its constraints."""
MAX_TURNS_BACK = 3
"""How many earlier user turns a chain of follow-ups may reach back for its subject."""
MIN_ANTECEDENT_WORDS = 2
"""Title and heading words before an anaphor that make the question its own antecedent (one is as often
the verb the anaphor is the object of: "change that")."""
MAX_PREFERRED = 2
"""Chunks of the previous answer read first: the fact plan reads four, so two stay for what the search finds."""
MIN_QUOTE_CHARS = 15
"""A piece of the previous answer shorter than this is too common to say which chunk it came from."""
REPLACED_BY_KIND = frozenset({"year", "date", "number"})
"""Constraint kinds a follow-up's own value replaces ("what about 2021?" after a question about 2020)."""

_MARKER = re.compile(r"\s*\[\d+\]\s*")
_LEAD_IN = re.compile(r"^[^\n]{1,60}?(?:——| — )")
"""A short answer before the quote ("5 个——", "60 — "): not part of the quoted text."""
_CELL = re.compile(r"[;；]\s+")
_LABEL = re.compile(r"^[^\s:：`]{1,20}[:：]\s+")
"""A table row's label ("Variable: ", "默认值: ") before its value."""
MAX_PIECES = 6
SCAN_LIMIT = 50_000
"""Up to this many chunks in scope, the previous answer's quotes are looked for in every one (tens of
milliseconds); beyond, in what a lexical search for them finds."""
MAX_SEARCHED_PIECES = 2
SEARCHED_CANDIDATES = 10
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|(?<=[.:])\s+|\n+")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d[\w.]*")


@dataclass(frozen=True)
class FollowUp:
    query: str
    """The question as typed, then the previous turn's words it leans on: what is searched and quoted against."""
    terms: tuple[str, ...]
    """The words added, as the user wrote them in the earlier turn."""
    prefer: tuple[str, ...]
    """Chunk ids the previous answer quoted, read first."""
    reason: str
    """Why the question leans back: `anaphor "that"` or `no named subject`."""


def _vocabulary(snap: Snapshot) -> frozenset[str]:
    return frozenset(structure.heading_index(snap).idf)


def _tokens(text: str) -> list[str]:
    """The text's words in order, lower-cased (jieba's words for Han text)."""
    if has_cjk(text):
        return [t.word.strip().lower() for t in init_posseg().lcut(text) if t.word.strip()]
    return [w.lower() for w in _LATIN_WORD.findall(text)]


def _content(token: str) -> bool:
    return token not in FUNCTION_WORDS and token not in ANAPHORS and not (len(token) == 1 and has_cjk(token))


_EXPLETIVE_IT = re.compile(
    r"\bit\s+(?:is|was|be|'s|will\s+be|would\s+be)?\s*\w+\s+(?:to|that|for)\b|\b(?:is|was|will|would|does|did)\s+it\s+\w+\s+(?:to|that|for)\b|\bit\s+takes?\b",
    re.I,
)
"""The "it" of "is it possible to…", "how long does it take": a placeholder subject that points at nothing."""


def anaphor(text: str) -> str | None:
    """The first word of `text` that stands for something said before, or None. Grammar decides for the
    words that also do other work: English "that" between two content words joins a clause ("the setting
    that controls it"), "it" in "is it possible to" is a placeholder, and 该 before a function word is
    "should" (我该怎么配置); "this", "that", 该 before a noun point back as much as a pronoun does."""
    tokens = _tokens(text)
    expletive = bool(_EXPLETIVE_IT.search(text))
    for i, t in enumerate(tokens):
        if t not in ANAPHORS:
            continue
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if t == "that" and i > 0 and _content(tokens[i - 1]) and after and _content(after):
            continue
        if t == "it" and expletive:
            continue
        if t == ANAPHOR_SHOULD and not (after and _content(after)):
            continue
        return t
    return None


def _own_words(question: Question) -> list:
    """The question's content words that may name its subject: years, dates and numbers aside."""
    return _words_outside(question, REPLACED_BY_KIND)


def _asked_words(question: Question) -> list:
    """The question's content words outside every constraint: what it asks about a thing, not which thing."""
    return _words_outside(question, frozenset(CONSTRAINT_KINDS))


def _words_outside(question: Question, kinds: frozenset[str]) -> list:
    pinned = [c.surface.lower() for c in question.constraints if c.kind in kinds]
    return [w for w in question.words if not any(w.surface.lower() in p for p in pinned)]


def _antecedent_before(question: Question, word: str, vocabulary: frozenset[str]) -> bool:
    """Whether the question names, before its anaphor, something the anaphor can point at: a name or
    quoted term, or `MIN_ANTECEDENT_WORDS` words titles and headings hold ("What is the default port and
    how do I change it?", "…the Quickstart plugin to guide my team through connecting their providers")."""
    text = question.text.lower()
    at = re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", text) if word.isascii() else None
    cut = at.start() if at else text.find(word)
    before = question.text[: max(cut, 0)]
    if any(c.kind in ("entity", "quoted") and c.surface in before for c in question.constraints):
        return True
    return len({key for _, key in surface_words(before) if key in vocabulary}) >= MIN_ANTECEDENT_WORDS


def leans_back(question: Question, vocabulary: frozenset[str]) -> str | None:
    """Why `question` leans on an earlier turn (`anaphor "it"`, `elliptical`, `no named subject`), or None
    when it stands alone: it names its own subject, and any anaphor in it points at a part of it."""
    word = anaphor(question.text)
    if word is not None and not _antecedent_before(question, word, vocabulary):
        return f'anaphor "{word}"'
    if ELLIPTICAL.search(question.text) and not _asked_words(question):
        return "elliptical"
    if not any(w.key in vocabulary for w in _own_words(question)):
        return "no named subject"
    return None


def _informative(piece: str) -> bool:
    """Long enough to say which chunk it came from: `MIN_QUOTE_CHARS`, a Han character counting twice."""
    return len(piece) + len(CJK.findall(piece)) >= MIN_QUOTE_CHARS


def _pieces(answer: str) -> list[str]:
    """The previous answer's quoted text, sentence by sentence, longest first: lead-ins and markers removed,
    and a table row shown as "label: value; …" cut into its values."""
    out: list[str] = []
    for part in _MARKER.split(answer):
        part = part.strip()
        part = _LEAD_IN.sub("", part, count=1) if _LEAD_IN.match(part) else part
        for sentence in _SENTENCE_END.split(part):
            for cell in _CELL.split(sentence):
                cell = _LABEL.sub("", cell.strip().lstrip("-*• ").rstrip(";；").strip(), count=1)
                if _informative(cell):
                    out.append(cell)
    return sorted(dict.fromkeys(out), key=len, reverse=True)


def _candidates(snap: Snapshot, scope: Scope, pieces: list[str]) -> list[str]:
    """The chunks that may hold the pieces: every chunk in scope when there are few enough to read through,
    else the lexical search's best for each piece (a verbatim sentence ranks its own chunk first)."""
    allowed = sorted(snap.recall.allowed_article_ids(scope))
    if sum(len(snap.chunks_by_article.get(a, ())) for a in allowed) <= SCAN_LIMIT:
        return [cid for aid in allowed for cid in snap.chunks_by_article.get(aid, [])]
    found: list[str] = []
    for piece in pieces[:MAX_SEARCHED_PIECES]:
        try:
            hits = tools.search(snap, scope, piece, limit=SEARCHED_CANDIDATES)["candidates"]
        except tools.ToolError:
            continue
        found += [c["chunk_id"] for c in hits if c.get("chunk_id")]
    return list(dict.fromkeys(found))


def quoted_chunks(snap: Snapshot, scope: Scope, answer: str) -> tuple[str, ...]:
    """The chunks in scope holding the previous answer's quotes verbatim: those holding the most of them
    first, then in the order the answer cites them."""
    pieces = _pieces(answer)[:MAX_PIECES]
    if not pieces:
        return ()
    order = {p: answer.find(p) for p in pieces}
    found: dict[str, tuple[int, int]] = {}
    for cid in _candidates(snap, scope, pieces):
        content = snap.chunks[cid].get("content") or ""
        held = [order[p] for p in pieces if p in content]
        if held:
            found[cid] = (-len(held), min(held))
    return tuple(sorted(found, key=lambda c: found[c])[:MAX_PREFERRED])


def _located(snap: Snapshot, chunk_ids: Sequence[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The matching keys of the words naming the quoted chunks' place (article title and heading path), and
    of the words of their text: what the previous answer was about, as the knowledge base says it."""
    place: list[str] = []
    text: list[str] = []
    for cid in chunk_ids:
        chunk = snap.chunks[cid]
        place.append(str(snap.articles.get(chunk.get("article_id") or "", {}).get("title") or ""))
        path = chunk.get("heading_path")
        place += [str(h) for h in path] if isinstance(path, (list, tuple)) else [str(path or chunk.get("heading") or "")]
        text.append(str(chunk.get("content") or ""))
    keys = lambda parts: frozenset(key for _, key in surface_words(" ".join(parts)))  # noqa: E731
    return keys(place), keys(text)


def _kept(previous: Question, current: Question) -> list[Constraint]:
    """The previous question's constraints the follow-up does not replace."""
    elliptical = not _asked_words(current)
    own = {c.kind for c in current.constraints}
    said = current.text.casefold()
    out = []
    for c in previous.constraints:
        if c.surface.casefold() in said:
            continue
        if c.kind in own and (c.kind in REPLACED_BY_KIND or elliptical):
            continue
        out.append(c)
    return out


def _added(previous: Question, current: Question, located: tuple[frozenset[str], frozenset[str]], vocabulary: frozenset[str]) -> list[str]:
    """The previous question's words the follow-up leans on, as written there: the constraints it does not
    replace, then the words of its subject. Where the previous answer's passages are known, those are the
    words they hold (the ones naming their article and section first): a word the passage does not hold
    ("kinda", "implications") would only pull the search elsewhere. Else all its words, those titles and
    headings hold first."""
    have = {w.key for w in current.words}
    said = current.text.casefold()
    kept = _kept(previous, current)
    dropped = [c.surface.casefold() for c in previous.constraints if c not in kept]
    words = [w for w in previous.words if w.key not in have and not any(w.surface.casefold() in d for d in dropped)]
    place, text = located
    subject = [w for w in words if w.key in place or w.key in text] or sorted(words, key=lambda w: w.key not in vocabulary)
    subject = sorted(subject, key=lambda w: w.key not in place)
    out = [c.surface for c in kept]
    out += [w.surface for w in subject if not any(w.surface.casefold() in o.casefold() for o in out)]
    return [t for t in dict.fromkeys(out) if t.casefold() not in said][:MAX_ADDED_TERMS]


def _turns(history: Sequence[dict[str, str]]) -> list[tuple[str, str]]:
    """(user question, the assistant's reply to it or "") for each user turn with text, in order."""
    out: list[tuple[str, str]] = []
    for h in history:
        text = (h.get("content") or "").strip()
        if h.get("role") == "user" and text:
            out.append((text, ""))
        elif h.get("role") == "assistant" and out and not out[-1][1]:
            out[-1] = (out[-1][0], text)
    return out


def _resolve(snap: Snapshot, scope: Scope, question: str, turns: list[tuple[str, str]], vocabulary: frozenset[str], depth: int) -> FollowUp | None:
    if not turns or depth > MAX_TURNS_BACK:
        return None
    current = parse(question)
    reason = leans_back(current, vocabulary)
    if reason is None:
        return None
    prev_text, prev_answer = turns[-1]
    earlier = _resolve(snap, scope, prev_text, turns[:-1], vocabulary, depth + 1)
    previous = parse(earlier.query if earlier else prev_text)
    if reason == "no named subject" and not any(w.key in vocabulary for w in _own_words(previous)):
        return None  # the earlier turn names no more than this one does
    prefer = quoted_chunks(snap, scope, prev_answer) if prev_answer else ()
    if not prefer and earlier is not None:
        prefer = earlier.prefer  # a turn answered with "not found" leaves the place to look where it was
    terms = _added(previous, current, _located(snap, prefer), vocabulary)
    if not terms and not prefer:
        return None
    query = f"{question} {' '.join(terms)}" if terms else question
    return FollowUp(query, tuple(terms), prefer, reason)


def resolve(snap: Snapshot, scope: Scope, question: str, history: Sequence[dict[str, str]]) -> FollowUp | None:
    """The follow-up reading of `question` given the earlier turns, or None when it stands alone (always
    None without history: a first question is answered exactly as asked)."""
    turns = _turns(history)
    if not turns:
        return None
    return _resolve(snap, scope, question.strip(), turns, _vocabulary(snap), 0)
