"""Follow-up questions: the conversation's previous turn informs retrieval, on both answering paths.

A question is a follow-up when it leans on the turn before it, which shows in its structure:

- it holds an anaphor: a pronoun or demonstrative (`ANAPHORS`, a closed grammatical class in English and
  Chinese, not topic words) pointing at something named earlier ("What is its default constant?",
  "它的常数默认是多少？");
- or it names nothing the knowledge base names: none of its content words is a word of any title or heading,
  while the previous user turn's words are (the subject left out: "默认是多少？" after "RRF 是什么？").

Then the search query gets the previous user turn's subject terms (its content words that titles or
headings hold, else all its content words; a turn that was itself a follow-up passes on its own
predecessor's subject too), and the chunks the previous answer quoted verbatim are read first: they are
what the previous turn was answered from. A question that stands alone is searched as asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from petrichor_pipeline.text.tokenize import jieba_query_tokens
from petrichor_serving.agent import structure
from petrichor_serving.agent.words import agent_stem, content_words
from petrichor_serving.recall.access import Scope
from petrichor_serving.snapshot import Snapshot

ANAPHORS = frozenset(
    "it its itself they them their theirs this these those he him his she her hers "
    "它 它们 其 该 此 这 那 这个 那个 这些 那些 这种 那种 这里 那里 他 她 他们 她们".split()
)
"""Third-person pronouns and demonstratives: words that stand for something said before."""
MAX_SUBJECT_TERMS = 6
MAX_TURNS_BACK = 3
"""How many earlier user turns a chain of follow-ups may reach back for its subject."""
MAX_PREFERRED = 2
MIN_QUOTE_CHARS = 15
"""A piece of the previous answer shorter than this is too common to say which chunk it came from."""
_MARKER = re.compile(r"\s*\[\d+\]\s*")


@dataclass(frozen=True)
class FollowUp:
    query: str
    """The question with the previous turn's subject terms: what is searched and quoted against."""
    terms: tuple[str, ...]
    prefer: tuple[str, ...]
    """Chunk ids the previous answer quoted, read first."""
    reason: str


def _vocabulary(snap: Snapshot) -> frozenset[str]:
    return frozenset(structure.heading_index(snap).idf)


def _leans_back(text: str, vocabulary: frozenset[str]) -> str | None:
    """Why `text` leans on an earlier turn ("anaphor" / "no named subject"), or None when it stands alone."""
    if any(t in ANAPHORS for t in jieba_query_tokens(text)):
        return "anaphor"
    if not any(w in vocabulary for w in content_words(text)):
        return "no named subject"
    return None


def _subject(turn: str, vocabulary: frozenset[str], asked: set[str]) -> list[str]:
    """The turn's words that name its subject, as the user wrote them (the match is on content words)."""
    words = [w for w in content_words(turn) if w not in asked]
    keys = set([w for w in words if w in vocabulary] or words)
    raw = [t for t in jieba_query_tokens(turn) if (agent_stem(t) if t.isascii() else t) in keys]
    return list(dict.fromkeys(raw))


def _quoted_chunks(snap: Snapshot, scope: Scope, answer: str) -> tuple[str, ...]:
    """The chunks in scope holding the previous answer's quotes verbatim (its text between markers)."""
    pieces = [p.strip() for p in _MARKER.split(answer) if len(p.strip()) >= MIN_QUOTE_CHARS][:3]
    if not pieces:
        return ()
    found: list[str] = []
    for aid in sorted(snap.recall.allowed_article_ids(scope)):
        for cid in snap.chunks_by_article.get(aid, []):
            content = snap.chunks[cid].get("content") or ""
            if any(p in content for p in pieces):
                found.append(cid)
                if len(found) == MAX_PREFERRED:
                    return tuple(found)
    return tuple(found)


def resolve(snap: Snapshot, scope: Scope, question: str, history: Sequence[dict[str, str]]) -> FollowUp | None:
    """The follow-up reading of `question` given the earlier turns, or None when it stands alone."""
    users = [h["content"] for h in history if h.get("role") == "user" and (h.get("content") or "").strip()]
    if not users:
        return None
    vocabulary = _vocabulary(snap)
    reason = _leans_back(question, vocabulary)
    if reason is None:
        return None
    asked = set(content_words(question))
    terms: list[str] = []
    named = False
    for turn in reversed(users[-MAX_TURNS_BACK:]):
        terms += _subject(turn, vocabulary, asked | set(terms))
        named = named or any(w in vocabulary for w in content_words(turn))
        if _leans_back(turn, vocabulary) is None:
            break
    terms = list(dict.fromkeys(terms))[:MAX_SUBJECT_TERMS]
    if not terms or (reason == "no named subject" and not named):
        return None  # nothing to add, or the earlier turns name no more than the question does
    last_answer = history[-1]["content"] if history[-1].get("role") == "assistant" else ""
    prefer = _quoted_chunks(snap, scope, last_answer) if last_answer else ()
    return FollowUp(f"{question} {' '.join(terms)}", tuple(terms), prefer, reason)
