"""The recall hit that flows between the pipeline stages, and the small text helpers the stages share.

`Hit.content` holds the full chunk, page or node text because rerank and the similarity test read it; it
never leaves the recall package (`pipeline.Candidate` is what callers see).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from petrichor_core.text.lang import CJK_CLASS
from petrichor_core.text.limits import SNIPPET_MAX_CHARS
from petrichor_core.text.sentences import mark_sentence_ends

_NOT_KNOWLEDGE_CHAR = re.compile(f"[^a-z0-9{CJK_CLASS}]+")
_NOT_KNOWLEDGE_OR_BREAK = re.compile(f"[^a-z0-9{CJK_CLASS}\n]+")


@dataclass(frozen=True)
class Window:
    """The child window a chunk hit was matched through: its id and offsets into the article text."""

    window_id: str
    start: int
    end: int

    def to_json(self) -> dict[str, object]:
        return {"window_id": self.window_id, "start": self.start, "end": self.end}


class _computed_once:
    """`functools.cached_property` without its lock (which Python 3.11 takes on every first read): a hit
    belongs to one search's thread, and search reads `key` and `article_key` of every hit it makes."""

    def __init__(self, compute):
        self._compute, self._name = compute, compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, hit, owner=None):
        if hit is None:
            return self
        value = hit.__dict__[self._name] = self._compute(hit)
        return value


@dataclass
class Hit:
    kb_id: str
    article_id: str | None
    title: str
    path: str
    """`article › h1 › h2` for chunks, the node title for tree nodes, empty otherwise (rerank reads it)."""
    heading_path: tuple[str, ...]
    snippet: str
    content: str
    score: float = 0.0
    routes: list[str] = field(default_factory=list)
    chunk_id: str | None = None
    page_key: str | None = None
    node_key: str | None = None
    rerank_score: float | None = None
    window: Window | None = None
    """Set on chunk hits found through a child window; the snippet then shows that window."""
    route_scores: dict[str, float] = field(default_factory=dict)
    """After fusion: each route's own best score for this hit (cosine, BM25, field score), for the rerank."""

    def copy(self) -> Hit:
        """A shallow copy (lists and dicts shared, as `copy.copy` gives) at a fraction of its cost: fusion and
        the rerank copy every hit they keep."""
        new = object.__new__(Hit)
        new.__dict__.update(self.__dict__)
        return new

    @_computed_once
    def key(self) -> str:
        """`chunk:`, `wiki:`, `tree:` or `article:` + kb + locator: what fusion merges on. Computed once per
        hit (fusion, balancing and diversity read it many times): no stage changes a hit's locator fields,
        they copy or replace the hit."""
        if self.chunk_id:
            return f"chunk:{self.kb_id}:{self.chunk_id}"
        if self.page_key:
            return f"wiki:{self.kb_id}:{self.page_key}"
        if self.node_key:
            return f"tree:{self.kb_id}:{self.node_key}"
        return f"article:{self.kb_id}:{self.article_id}"

    @_computed_once
    def article_key(self) -> str:
        """The balancing and per-article-cap group: the article, or the hit itself when it has none."""
        return f"{self.kb_id}:{self.article_id}" if self.article_id else self.key


def normalize_knowledge_text(text: str) -> str:
    """Lowercase and keep only a-z, 0-9 and CJK: what whole-query containment tests compare."""
    return _NOT_KNOWLEDGE_CHAR.sub("", text.lower())


@lru_cache(maxsize=4096)
def knowledge_sentences(text: str) -> tuple[str, tuple[str, ...]]:
    """`normalize_knowledge_text` of each sentence of `text` (`text.sentences`), empty ones left out, and
    all of them joined by line breaks (a token is in the joined text only if it is in some sentence). Two
    regex passes over the whole text, not two per sentence; cached, since the same chunks come back search
    after search (a snapshot's texts never change, and a str caches its hash). 4,096 entries of a text of
    at most 1,200 code points (the rerank reads no more) and its normalised copies stay under ~30 MB."""
    marked = _NOT_KNOWLEDGE_OR_BREAK.sub("", mark_sentence_ends(text.lower()))
    return marked, tuple(s for s in marked.split("\n") if s)


def compact_text(text: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    """Collapse whitespace and cut to `limit` code points plus `…`: a snippet never carries a whole chunk.

    A long text is compacted from its head only, so a snippet costs its own size, not the article's.
    Whitespace is what `str.isspace` calls so (the same code points as the regex `\\s`); `str.split` finds
    its runs several times faster than a regex scan, which every hit of every route pays.
    """
    if len(text) > 4 * limit:
        head = " ".join(text[: 4 * limit].split())
        if len(head) > limit:
            return head[:limit] + "…"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
