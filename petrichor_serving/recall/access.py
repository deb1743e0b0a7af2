"""Who may read what, decided before anything is ranked.

A `Scope` names the tenant, knowledge bases and visibility a request may read. `Access` turns it into a
boolean row mask per table plus a SQL prefilter for LanceDB, so every route searches only readable rows:
BM25 statistics, vector top-k and wiki scores never see, count or return anything else.

Wiki pages aggregate several articles, so a page is readable only when its own tenant and knowledge base
match and every article it was built from is readable too; otherwise a summary page could carry another
tenant's (or a private article's) text into a public answer.

A past snapshot (a request naming `snapshot_version`) is read under today's rules as well as its own: its
scope carries `readable_now`, what the same caller may read in the current snapshot at this moment, and
every mask, the vector prefilter and every page check are cut down to it. Nothing a caller lost since
(an article moved to another tenant, a share withdrawn or expired, a knowledge base out of the key's scope,
an article deleted) comes back by naming an older snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from petrichor_serving.recall.tables import Articles, Chunks, Questions, TreeNodes, WikiPages, Windows


@dataclass(frozen=True)
class Scope:
    tenant: str | None = None
    """None: every tenant (local single-user mode)."""
    kb_ids: frozenset[str] | None = None
    """None: every knowledge base."""
    public_only: bool = False
    """Only public, unprotected, unexpired articles (anonymous questions over shares)."""
    article_id: str | None = None
    """Focus on one article: its hits only, no wiki route, one article in balancing."""
    readable_now: frozenset[str] | None = None
    """Reading a past snapshot: the articles the same caller may read in the current snapshot now (its
    tenant, visibility, share expiry and knowledge-base rules, and the key's scope today). An article
    outside it is unreadable in the past snapshot whatever its old row says; one deleted since is absent
    from the current snapshot, so it is never in the set and never readable through an older one.
    None: this is the current snapshot."""

    def __post_init__(self) -> None:
        for name in ("kb_ids", "readable_now"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, frozenset):
                object.__setattr__(self, name, frozenset(value))  # hashable: scopes key a cache

    @property
    def unrestricted(self) -> bool:
        return self.tenant is None and self.kb_ids is None and not self.public_only and self.readable_now is None

    @property
    def retrieval_scope(self) -> str:
        if self.article_id is not None:
            return "focused_article"
        if self.kb_ids is not None and len(self.kb_ids) == 1:
            return "article_then_chapter"
        return "cross_kb_article_then_chapter"


ReadableNow = Callable[[Scope, datetime], frozenset[str]]
"""The articles a scope may read in the current snapshot at a moment: what a past snapshot's index is
given (`RecallIndex.present`) to read every scope within."""


@dataclass(frozen=True)
class Access:
    readable_ids: frozenset[str]
    """Every article the scope may read, focus aside: what read tools check."""
    articles: np.ndarray
    """Readable and, when the scope focuses on an article, that one only: what search ranks."""
    chunks: np.ndarray
    windows: np.ndarray
    questions: np.ndarray
    wiki: np.ndarray
    tree: np.ndarray
    vector_filter: str | None
    """LanceDB prefilter; None means no restriction (meaningful only when some article is readable)."""
    valid_until: datetime | None
    """The earliest share expiry among readable articles: the mask must be recomputed from then on."""

    @property
    def any_article(self) -> bool:
        return bool(self.articles.any())


def sql_quote(value: str) -> str:
    """A SQL string literal: single quotes doubled, so no value can end the literal early."""
    return "'" + value.replace("'", "''") + "'"


def page_readable(scope: Scope, tenant: str | None, kb_id: str | None, article_ids: Sequence[str], readable_ids: Set[str]) -> bool:
    """A wiki page is readable when its tenant and knowledge base are in scope and every article it was
    built from is readable; under `public_only`, or in a past snapshot, a page built from no article is
    not (no article readable today vouches for it)."""
    if scope.unrestricted:
        return True
    if scope.tenant is not None and tenant != scope.tenant:
        return False
    if scope.kb_ids is not None and kb_id not in scope.kb_ids:
        return False
    if (scope.public_only or scope.readable_now is not None) and not article_ids:
        return False
    return all(aid in readable_ids for aid in article_ids)


def _vector_filter(scope: Scope, articles: Articles, readable: np.ndarray) -> str | None:
    if scope.article_id is not None:
        return f"article_id = {sql_quote(scope.article_id)}"
    if scope.public_only or scope.readable_now is not None:  # no column holds the rule: name the rows
        ids = ", ".join(sql_quote(articles.ids[i]) for i in np.flatnonzero(readable))
        return f"article_id IN ({ids})"
    conditions = []
    if scope.tenant is not None:
        conditions.append(f"tenant = {sql_quote(scope.tenant)}")
    if scope.kb_ids is not None:
        conditions.append(f"kb_id IN ({', '.join(sql_quote(k) for k in sorted(scope.kb_ids))})")
    return " AND ".join(conditions) or None


def _by_row(mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`mask[rows]`, with row -1 (a dangling reference) never allowed."""
    return np.append(mask, False)[rows] if len(rows) else np.zeros(0, dtype=bool)


def readable_articles(scope: Scope, now: datetime, articles: Articles) -> tuple[np.ndarray, datetime | None]:
    """The article rows `scope` may read (its focus aside) and the earliest expiry among readable shares.
    In a past snapshot a row must also be in `scope.readable_now`: readable then and now."""
    n = len(articles.ids)
    readable = np.ones(n, dtype=bool)
    if scope.readable_now is not None:
        readable &= np.fromiter((a in scope.readable_now for a in articles.ids), dtype=bool, count=n)
    if scope.tenant is not None:
        readable &= articles.tenant_arr == scope.tenant
    if scope.kb_ids is not None:
        readable &= np.isin(articles.kb_arr, list(scope.kb_ids))
    valid_until = None
    if scope.public_only:
        readable &= articles.shareable
        for i in np.flatnonzero(readable):
            expiry = articles.expires[i]
            if expiry is None:
                continue
            if expiry <= now:
                readable[i] = False
            elif valid_until is None or expiry < valid_until:
                valid_until = expiry
    return readable, valid_until


def compute_access(
    scope: Scope,
    now: datetime,
    articles: Articles,
    chunks: Chunks,
    questions: Questions,
    wiki: WikiPages,
    tree: TreeNodes,
    windows: Windows,
) -> Access:
    readable, valid_until = readable_articles(scope, now, articles)
    readable_ids = frozenset(articles.ids[i] for i in np.flatnonzero(readable))
    pages = wiki.searchable.copy()
    if not scope.unrestricted:
        for i in np.flatnonzero(pages):
            pages[i] = page_readable(scope, wiki.tenants[i], wiki.kb_ids[i], wiki.article_ids[i], readable_ids)

    focused = readable if scope.article_id is None else readable & (articles.id_arr == scope.article_id)
    chunk_mask = _by_row(focused, chunks.article_rows)
    return Access(
        readable_ids=readable_ids,
        articles=focused,
        chunks=chunk_mask,
        windows=_by_row(focused, windows.article_rows) & _by_row(chunk_mask, windows.chunk_rows),
        questions=_by_row(focused, questions.article_rows) & _by_row(chunk_mask, questions.chunk_rows),
        wiki=pages,
        tree=_by_row(focused, tree.article_rows),
        vector_filter=_vector_filter(scope, articles, focused),
        valid_until=valid_until,
    )
