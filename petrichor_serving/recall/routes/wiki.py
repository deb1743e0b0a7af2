"""Readable entity/concept pages scored field by field; not run in a focused search.

A page is derived text: it restates chunks of the articles it was built from. So a matching page first
credits its source chunks (the readable chunks of its articles that name it, as the build's source refs
pick them), which helps the chunk that states a fact rank instead of displacing it. The page itself is a
candidate only when the query asks about the page's subject ("什么是主节点", "What is RRF?"); for any
other question its evidence is its sources.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from petrichor_core.text.lang import CJK_CLASS
from petrichor_core.text.lang.question_words import WHAT_IS_PHRASING
from petrichor_serving.recall.hits import Hit, normalize_knowledge_text
from petrichor_serving.recall.routes.base import Route, RouteContext, RouteQuery

if TYPE_CHECKING:
    from petrichor_serving.recall.index import RecallIndex

NAME = "wiki"
LEXICAL_POOL = 400
"""Wiki pages field-scored per query: the best by BM25, as the reference caps its candidate query."""
SOURCE_CHUNKS_PER_ARTICLE = 3
"""Chunks a page credits per article it was built from: the first that name it, as the build's
`knowledge.wiki.SOURCE_CHUNKS_PER_PAGE` source refs are chosen."""

_STANDALONE_ALIAS = re.compile(f"[A-Z][A-Z0-9]+|.*[{CJK_CLASS}].*")
"""Alias pieces that name the page on their own: acronyms (RRF) and anything with CJK (哨兵)."""


def score_knowledge_fields(title: str, summary: str, content: str, extra: str, query_norm: str, tokens: Sequence[str]) -> float:
    """Whole normalised query in title / summary / content / extra: +8 / +4 / +2 / +2; each normalised
    token: +4 / +2 / +1 / +1. All arguments are already normalised."""
    score = 0.0
    if query_norm:
        score += 8 * (query_norm in title) + 4 * (query_norm in summary)
        score += 2 * (query_norm in content) + 2 * (query_norm in extra)
    for token in tokens:
        score += 4 * (token in title) + 2 * (token in summary) + (token in content) + (token in extra)
    return score


def question_subject(query: str) -> str:
    """The normalised query without what-is phrasing: equal to a page's name when the query asks about it."""
    return normalize_knowledge_text(WHAT_IS_PHRASING.sub(" ", query))


def names_page(subject: str, title: str, extra: str) -> bool:
    """Whether `subject` (from `question_subject`) is one of the page's names, or all of its aliases read
    together (a single multi-word alias: "Reciprocal Rank Fusion"). `extra` is the page key then the
    aliases, space-joined (`text.lexical.wiki_extra`)."""
    if not subject:
        return False
    return subject in page_names(title, extra) or subject == normalize_knowledge_text(extra.partition(" ")[2])


def page_names(title: str, extra: str) -> frozenset[str]:
    """The normalised names a source chunk may call the page by: its title, its key's name and its aliases
    (of a multi-word alias list, only the pieces that stand alone: CJK words and acronyms)."""
    key, _, aliases = extra.partition(" ")
    names = {title, key.partition("-")[2]}
    pieces = aliases.split()
    names.update(pieces if len(pieces) == 1 else (p for p in pieces if _STANDALONE_ALIAS.fullmatch(p)))
    return frozenset(n for n in map(normalize_knowledge_text, names) if len(n) >= 2)


class _PageSources:
    """Per index: each page's source chunk rows, found on first use and kept (an index is read-only).

    Concurrent searches may fill the same entry twice; both compute the same value."""

    def __init__(self, index: RecallIndex) -> None:
        chunks_of: dict[int, list[int]] = {}
        for row, article_row in enumerate(index.chunks.article_rows.tolist()):
            chunks_of.setdefault(article_row, []).append(row)
        self._chunks_of = chunks_of
        self._norm_chunks: dict[int, str] = {}
        self._pages: dict[int, tuple[int, ...]] = {}

    def rows(self, index: RecallIndex, page: int) -> tuple[int, ...]:
        """Chunk rows of the page's articles whose heading or text names the page, the first few per
        article, in table order."""
        cached = self._pages.get(page)
        if cached is not None:
            return cached
        names = page_names(index.wiki.titles[page], index.wiki.extras[page])
        found: list[int] = []
        for article_id in index.wiki.article_ids[page]:
            article_row = index.articles.row_of.get(article_id)
            taken = 0
            for row in self._chunks_of.get(article_row, ()) if article_row is not None else ():
                text = self._norm_chunks.get(row)
                if text is None:
                    ch = index.chunks
                    text = normalize_knowledge_text(" ".join((*ch.heading_paths[row], ch.headings[row], ch.contents[row])))
                    self._norm_chunks[row] = text
                if any(n in text for n in names):
                    found.append(row)
                    taken += 1
                    if taken >= SOURCE_CHUNKS_PER_ARTICLE:
                        break
        self._pages[page] = rows = tuple(found)
        return rows


_SOURCES: dict[int, _PageSources] = {}


def page_sources(index: RecallIndex) -> _PageSources:
    """The index's `_PageSources`, created once and dropped with the index."""
    sources = _SOURCES.get(id(index))
    if sources is None:
        sources = _SOURCES.setdefault(id(index), _PageSources(index))
        weakref.finalize(index, _SOURCES.pop, id(index), None)
    return sources


def run(ctx: RouteContext, query: RouteQuery) -> list[Hit]:
    """The pool is the `LEXICAL_POOL` best pages by BM25, ranked by the field score. Each page in turn
    adds its readable source chunks (at the page's score), then itself when the query names it."""
    index = ctx.index
    w = index.wiki
    query_norm = normalize_knowledge_text(query.text)
    subject = question_subject(query.text)
    tokens = [t for t in map(normalize_knowledge_text, query.terms) if t]
    pool = sorted(r.row for r in index.bm25["wiki"].top(query.terms, LEXICAL_POOL, ctx.access.wiki))
    scored: list[tuple[float, int]] = []
    for row in pool:
        score = score_knowledge_fields(w.norm_title[row], w.norm_summary[row], w.norm_content[row], w.norm_extra[row], query_norm, tokens)
        if score > 0:
            scored.append((score, row))
    scored.sort(key=lambda item: -item[0])  # stable: ties keep table order
    sources = page_sources(index)
    readable = ctx.access.chunks
    hits: list[Hit] = []
    credited: set[int] = set()
    for score, row in scored:
        for chunk_row in sources.rows(index, row):
            if chunk_row not in credited and readable[chunk_row]:
                credited.add(chunk_row)
                hits.append(index.chunk_hit(chunk_row, NAME, score))
        if names_page(subject, w.titles[row], w.extras[row]):
            hits.append(index.wiki_hit(row, NAME, score))
        if len(hits) >= query.top_k:
            break
    return hits[: query.top_k]


ROUTE = Route(NAME, run, diagnostics_key="wikiKeys", focused=False, default_on=False)
"""Off in a default search: measured on every dev set, with the dense share in the rerank the wiki's votes
for its source chunks lifted articles that merely share a concept above the one that answers
(docs/evaluation.md). The concept plan searches with it (`CONCEPT_CONFIG`)."""
