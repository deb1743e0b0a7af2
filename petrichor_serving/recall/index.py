"""The in-memory recall index of one snapshot: tables, BM25 postings, vector tables, access cache.

Built once when a snapshot is loaded and read-only afterwards, so concurrent requests share it; the only
mutable part is the small access cache, guarded by a lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import pyarrow as pa

from petrichor_core.contract.schemas import SCHEMAS
from petrichor_core.text.bm25 import BM25Index
from petrichor_core.text.lang import has_cjk
from petrichor_core.text.lang.texts import ASKED_AS
from petrichor_core.text.lexical import build_indexes, render_path
from petrichor_core.text.tokenize import Tokenizer, get_tokenizer
from petrichor_serving.recall.access import Access, ReadableNow, Scope, compute_access, page_readable
from petrichor_serving.recall.dense import maybe_dense, share_identical
from petrichor_serving.recall.hits import Hit, Window, compact_text
from petrichor_serving.recall.spelling import Vocabulary, corrected
from petrichor_serving.recall.tables import Articles, Chunks, Questions, TreeNodes, VectorTable, WikiPages, Windows

_ACCESS_CACHE_SIZE = 256
_DISPLAY_CACHE_SIZE = 4096
"""Chunk rows and window rows whose hit fields (text, path, snippet) are kept: every route of a search, and
search after search, turns up the same rows, and reading a text out of the Arrow column and compacting its
snippet cost more than the hit itself (at most ~10 MB for chunks of 1,200 code points)."""


@dataclass
class RecallIndex:
    tokenizer: Tokenizer
    articles: Articles
    chunks: Chunks
    questions: Questions
    wiki: WikiPages
    tree: TreeNodes
    windows: Windows
    bm25: Mapping[str, BM25Index]
    """The snapshot's BM25 indexes by `text.lexical.INDEXES` name (`chunk`, `window`, `question`, `wiki`, `tree`)."""
    vectors: dict[str, Any] = field(default_factory=dict)
    """The vector tables routes search, by manifest name (the `vector_tables` given to `build`); absent when
    not loaded."""
    present: ReadableNow | None = None
    """Set on a past snapshot's index (`history.RetainedSnapshots`): every scope is read within what the same
    caller may read in the current snapshot now. None: this index is read under its own rows alone."""
    _access: OrderedDict[Scope, Access] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _spelling: Vocabulary | None = field(default=None, repr=False)
    _chunk_display: Callable[[int], tuple] = field(init=False, repr=False, compare=False)
    _window_display: Callable[[int], tuple[Window, str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._chunk_display = lru_cache(maxsize=_DISPLAY_CACHE_SIZE)(self._chunk_fields)
        self._window_display = lru_cache(maxsize=_DISPLAY_CACHE_SIZE)(self._window_fields)

    @property
    def spelling(self) -> Vocabulary:
        """The chunk index's words, for matching a misspelled query word (`spelling.corrected`)."""
        spelling = self._spelling
        if spelling is None:
            chunk = self.bm25["chunk"]
            spelling = Vocabulary(chunk.vocab, chunk.indptr)
            object.__setattr__(self, "_spelling", spelling)
        return spelling

    def knows(self, term: str) -> bool:
        """Whether any of the snapshot's BM25 indexes holds `term` (an index tokenizer's token), or, for a
        Latin word, an indexed word it misspells (`spelling.corrected`)."""
        if any(term in index.vocab for index in self.bm25.values()):
            return True
        return len(corrected([term], self.spelling)) > 1

    @classmethod
    def build(
        cls,
        articles: pa.Table,
        chunks: pa.Table,
        questions: pa.Table,
        wiki_pages: pa.Table,
        tree_nodes: pa.Table,
        *,
        vector_tables: Mapping[str, VectorTable],
        vectors: Mapping[str, Any] | None = None,
        tokenizer: str,
        lexical: Mapping[str, BM25Index] | None = None,
        chunk_windows: pa.Table | None = None,
    ) -> RecallIndex:
        """`vector_tables` are the tables the routes search (`routes.vector_tables()`), passed in so the
        index need not know the route registry; of `vectors` (LanceDB tables already checked out at the
        snapshot's versions, by manifest name), those are loaded (into memory when they fit), keyed by the
        rows each declares.
        `lexical` holds the snapshot's stored BM25 postings (`text.lexical.from_table`), built with
        `tokenizer` (the manifest's: `Manifest.tokenizer`; serving has no default of its own), which also
        tokenises every query; without them the postings are built here. `chunk_windows` absent (an older
        snapshot) means no windows, and the window routes find nothing."""
        if chunk_windows is None:
            chunk_windows = SCHEMAS["chunk_windows"].empty_table()
        tok = get_tokenizer(tokenizer)
        art = Articles.from_arrow(articles)
        ch = Chunks.from_arrow(chunks, art)
        qs = Questions.from_arrow(questions, art, ch)
        wiki = WikiPages.from_arrow(wiki_pages)
        tree = TreeNodes.from_arrow(tree_nodes, art)
        windows = Windows.from_arrow(chunk_windows, art, ch)
        if lexical is None:
            tables = {
                "articles": articles,
                "chunks": chunks,
                "chunk_windows": chunk_windows,
                "questions": questions,
                "wiki_pages": wiki_pages,
                "tree_nodes": tree_nodes,
            }
            lexical = build_indexes(tables, tok.name)
        index = cls(tokenizer=tok, articles=art, chunks=ch, questions=qs, wiki=wiki, tree=tree, windows=windows, bm25=dict(lexical))
        for name, table in (vectors or {}).items():
            if table is not None and name in vector_tables:
                index.vectors[name] = maybe_dense(table, getattr(index, vector_tables[name].rows).row_of)
        index.vectors = share_identical(index.vectors)
        return index

    # ------------------------------------------------------------------------------------------ access

    def _today(self, scope: Scope, now: datetime) -> Scope:
        """`scope` within today's rules when this is a past snapshot's index (`Scope.readable_now`)."""
        if self.present is None or scope.readable_now is not None:
            return scope
        return replace(scope, readable_now=self.present(scope, now))

    def access(self, scope: Scope, now: datetime) -> Access:
        """The scope's masks, computed once and cached until a readable share expires (and, in a past
        snapshot, until what the caller may read today changes: the set is part of the cache key)."""
        scope = self._today(scope, now)
        with self._lock:
            cached = self._access.get(scope)
            if cached is not None and (cached.valid_until is None or now < cached.valid_until):
                self._access.move_to_end(scope)
                return cached
        computed = compute_access(scope, now, self.articles, self.chunks, self.questions, self.wiki, self.tree, self.windows)
        with self._lock:
            self._access[scope] = computed
            self._access.move_to_end(scope)
            while len(self._access) > _ACCESS_CACHE_SIZE:
                self._access.popitem(last=False)
        return computed

    def allowed_article_ids(self, scope: Scope, now: datetime | None = None) -> frozenset[str]:
        """The articles `scope` may read (its focus aside), for tools that read by id."""
        return self.access(scope, now or datetime.now(UTC)).readable_ids

    def page_allowed(self, scope: Scope, page: Mapping[str, Any], now: datetime | None = None) -> bool:
        """Whether `scope` may read a wiki page row (any kind), by the same rule search applies."""
        now = now or datetime.now(UTC)
        scope = self._today(scope, now)
        readable = self.allowed_article_ids(scope, now)
        sources = tuple(page.get("article_ids") or ())
        return page_readable(scope, page.get("tenant"), page.get("kb_id"), sources, readable)

    # -------------------------------------------------------------------------------------------- hits

    def chunk_hit(self, row: int, route: str, score: float = 0.0, question_row: int | None = None, window_row: int | None = None) -> Hit:
        """A chunk hit; found through a generated question, its snippet quotes the question instead; found
        through a child window, the snippet shows that window and the hit carries its offsets."""
        kb_id, article_id, title, path, heading_path, snippet, content, chunk_id = self._chunk_display(row)
        window = None
        if window_row is not None:
            window, snippet = self._window_display(window_row)
        elif question_row is not None:
            question = self.questions.questions[question_row]
            label = ASKED_AS["zh" if has_cjk(question) else "en"]
            snippet = compact_text(label + question)
        return Hit(
            kb_id=kb_id,
            article_id=article_id,
            title=title,
            path=path,
            heading_path=heading_path,
            snippet=snippet,
            content=content,
            score=score,
            routes=[route],
            chunk_id=chunk_id,
            window=window,
        )

    def _chunk_fields(self, row: int) -> tuple[str, str, str, str, tuple[str, ...], str, str, str]:
        """A chunk row's kb, article id, title, path, heading path, snippet, text and id, as its hits show them."""
        ch, art = self.chunks, self.articles
        a = int(ch.article_rows[row])
        article_title = art.titles[a]
        heading, heading_path, content = ch.headings[row], ch.heading_paths[row], ch.contents[row]
        path = render_path(article_title, heading_path, heading)
        return ch.kb_ids[row], art.ids[a], heading.strip() or article_title, path, heading_path, compact_text(content), content, ch.ids[row]

    def _window_fields(self, row: int) -> tuple[Window, str]:
        w = self.windows
        return Window(w.ids[row], int(w.starts[row]), int(w.ends[row])), compact_text(w.contents[row])

    def wiki_hit(self, row: int, route: str, score: float) -> Hit:
        w = self.wiki
        return Hit(
            kb_id=w.kb_ids[row],
            article_id=None,
            title=w.titles[row],
            path="",
            heading_path=w.category_paths[row],
            snippet=compact_text(w.summaries[row]) or compact_text(w.contents[row]),
            content=w.contents[row],
            score=score,
            routes=[route],
            page_key=w.keys[row],
        )

    def tree_hit(self, row: int, route: str, score: float) -> Hit:
        t = self.tree
        return Hit(
            kb_id=t.kb_ids[row],
            article_id=self.articles.ids[int(t.article_rows[row])],
            title=t.titles[row],
            path=t.titles[row],
            heading_path=t.heading_paths[row],
            snippet=compact_text(t.summaries[row]) or compact_text(t.contents[row]),
            content=t.contents[row],
            score=score,
            routes=[route],
            node_key=t.keys[row],
        )

    def article_hit(self, row: int, route: str, score: float) -> Hit:
        art = self.articles
        return Hit(
            kb_id=art.kb_ids[row],
            article_id=art.ids[row],
            title=art.titles[row],
            path="",
            heading_path=(),
            snippet=compact_text(art.contents[row]),
            content=art.contents[row],
            score=score,
            routes=[route],
        )
