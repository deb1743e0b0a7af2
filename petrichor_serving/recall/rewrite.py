"""Deterministic query rewrite: split a compound question into at most three sub-queries.

No model is called: a simple question stays exactly as asked. The rule (the reference's, off by default:
`RecallConfig.rewrite`): a long question with several clauses or a conjunction also gets each clause searched
on its own, so that both halves of "compare A, and explain B" can find their sections. A caller's own
sub-queries are always searched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from petrichor_core.text.lang.cues import CLAUSE_CONJUNCTION
from petrichor_core.text.lang.question_words import CLAUSE_QUESTION_WORDS, QUESTION_PREFIXES
from petrichor_serving.recall.coordinated import coordinated_queries
from petrichor_serving.recall.query import Query

MAX_CLAUSES = 3
"""Clauses the rewrite searches besides the question itself."""
MIN_REWRITE_CHARS = 18
MIN_CLAUSE_CHARS = 4

# RE2's `\s` is ASCII whitespace only, hence the explicit class (`lang.cues.CLAUSE_CONJUNCTION`'s word boundaries are ASCII too).
_QUESTION_SPLIT = re.compile(r"[，,；;。？?！!]+[\t\n\f\r ]*")
_CLAUSE_SPLIT = re.compile(r"[|，,；;。？?！!]+")


def _trim_prefix(clause: str) -> str:
    for prefix in QUESTION_PREFIXES:
        if clause.startswith(prefix):
            return clause[len(prefix) :].strip()
    return clause


def rewrite_query(query: str) -> list[str]:
    """The clauses of a compound question (the reference's rule); empty for a short or simple one."""
    text = query
    if len(text) < MIN_REWRITE_CHARS:
        return []
    long_parts = sum(1 for part in _QUESTION_SPLIT.split(text) if len(part.strip()) >= MIN_CLAUSE_CHARS)
    if long_parts < 2 and not CLAUSE_CONJUNCTION.search(text):
        return []
    out: list[str] = []
    for clause in _CLAUSE_SPLIT.split(CLAUSE_CONJUNCTION.sub("|", text)):
        clause = _trim_prefix(clause.strip())
        clause = CLAUSE_QUESTION_WORDS.sub(" ", clause).strip()
        if len(clause) < MIN_CLAUSE_CHARS or clause == text or clause in out:
            continue
        out.append(clause)
        if len(out) >= MAX_CLAUSES:
            break
    return out


def build_queries(primary: Query, sub_queries: Sequence[str] | None = None, *, clauses: bool = True, coordinated: bool = False) -> list[str]:
    """`[primary, *extra]`: explicit sub-queries (as many as the caller gives, each trimmed) win over the
    clause rule's (only when switched on), which wins over one query per coordinated value
    (`coordinated.coordinated_queries`, when switched on); repeats (ignoring case) and one-character values
    are dropped. `queries[1:]` are the rewritten ones."""
    extra = list(sub_queries or ()) or (rewrite_query(primary) if clauses else []) or (coordinated_queries(primary) if coordinated else [])
    queries: list[str] = [primary]
    seen = {primary.lower()}
    for value in extra:
        value = value.strip()
        if len(value) < 2 or value.lower() in seen:
            continue
        seen.add(value.lower())
        queries.append(value)
    return queries
