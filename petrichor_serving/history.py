"""What serving reads of the past: stored article versions (citation resolution) and retained snapshots.

A citation names `article_id`, `article_version` and offsets into that version's content (Python string
indices, as `agent.citations` computes them). The version is read from the history store (`contract.history`),
never from the current snapshot, so it resolves after the article is edited or deleted. Scope is checked
on the stored version's rows (one per scope it was published under) and, while the article still exists, on
its current row as well: a version never becomes readable by a key or a public caller that may not read
the article today, nor by one under whose scope it was never published.

Retained snapshots load lazily, the same way as the current one, and a few stay cached. A past snapshot is
read under today's rules as well as its own: its index is given what the same caller may read in the
current snapshot (`RecallIndex.present`), and every search, read and answer over it stays within that
(`Scope.readable_now`). An article deleted since, or moved out of the caller's scope, is not readable
through any older snapshot; with no current snapshot loaded, nothing is.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from petrichor_core.contract.current import published_snapshots
from petrichor_core.contract.history import read_article_records
from petrichor_core.contract.manifest import read_manifest
from petrichor_core.contract.schemas import conform, to_table
from petrichor_serving.errors import ServiceError
from petrichor_serving.recall.access import Scope, readable_articles
from petrichor_serving.recall.tables import Articles
from petrichor_serving.snapshot import Snapshot, SnapshotStore, load_snapshot

CACHED_SNAPSHOTS = 2
"""Older snapshots held in memory at once besides the current one (each costs a full load)."""


class HistoryError(ServiceError):
    """A citation or retained snapshot that cannot be served (`errors.failure` renders it)."""

    def __init__(self, status: int, message: str):
        super().__init__(message, status)


@dataclass(frozen=True)
class CitationRef:
    article_id: str
    article_version: str
    start: int
    end: int


def _row_readable(scope: Scope, row: dict[str, Any], now: datetime) -> bool:
    articles = Articles.from_arrow(conform("articles", to_table("articles", [row])))
    mask, _ = readable_articles(scope, now, articles)
    return bool(mask[0])


def resolve_citation(store: SnapshotStore, current: Snapshot | None, scope: Scope, ref: CitationRef) -> dict[str, Any]:
    """`{quote, article_id, article_version, title, heading_path}` for a citation; 404 when the version is
    unknown, collected, of another article or out of scope, or when the offsets fall outside it.

    The version must have been published under a scope the caller may read (one of its records, one per
    scope), and while the article is published the caller must be able to read it today: after a move to
    another tenant the new owner resolves it and the old one does not; no caller ever reads a text that
    was never published in a scope of its own."""
    missing = HistoryError(404, f"article version {ref.article_version!r} of {ref.article_id!r} not found")
    now = datetime.now(UTC)
    records = [r for r in read_article_records(store.data_dir, ref.article_version) if r.article["article_id"] == ref.article_id]
    record = next((r for r in records if _row_readable(scope, r.article, now)), None)
    if record is None:
        raise missing
    live = current is not None and ref.article_id in current.articles
    if live and current is not None and ref.article_id not in current.recall.allowed_article_ids(scope, now):
        raise missing
    if scope.public_only and not live:
        raise missing  # a share exists only while its article is published
    content = record.article["content"]
    if not 0 <= ref.start < ref.end <= len(content):  # no such quote: 404 (offsets the document allows are never a 400)
        raise HistoryError(404, f"no text at these offsets of that version: 0 <= start < end <= {len(content)}")
    return {
        "quote": content[ref.start : ref.end],
        "article_id": ref.article_id,
        "article_version": ref.article_version,
        "title": record.article["title"],
        "heading_path": record.heading_path_at(ref.start),
    }


class RetainedSnapshots:
    """The snapshots still on disk: listed from their manifests, loaded on first use, a few kept."""

    def __init__(self, store: SnapshotStore, *, capacity: int = CACHED_SNAPSHOTS):
        self.store = store
        self.capacity = capacity
        self._cache: OrderedDict[str, Snapshot] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def _dir(self):
        return self.store.data_dir / "snapshots"

    def versions(self) -> list[str]:
        """The published snapshots on disk, oldest first (not one a build staged and never published)."""
        return published_snapshots(self._dir)

    def listing(self) -> dict[str, Any]:
        """`{snapshots: [{version, created_at, current}]}`, oldest first. No row counts: a snapshot holds every
        tenant's articles, and its size is not one tenant's to know."""
        cur = self.store.current
        out = []
        for version in self.versions():
            try:
                m = read_manifest(self._dir, version)
            except (OSError, ValueError):
                continue  # collected while listing, or not a snapshot this server can read
            out.append({"version": version, "created_at": m.created_at, "current": cur is not None and cur.version == version})
        return {"snapshots": out}

    def _readable_now(self, scope: Scope, now: datetime) -> frozenset[str]:
        """The articles `scope` (its focus aside) may read in the snapshot current at this call."""
        current = self.store.current
        if current is None:
            return frozenset()
        return current.recall.allowed_article_ids(replace(scope, article_id=None, readable_now=None), now)

    def get(self, version: str) -> Snapshot:
        """The snapshot `version`: the current one, a cached one, or loaded now; 404 when not retained."""
        cur = self.store.current
        if cur is not None and cur.version == version:
            return cur
        if version not in self.versions():
            with self._lock:
                self._cache.pop(version, None)
            raise HistoryError(404, f"snapshot {version!r} is not retained")
        with self._lock:
            cached = self._cache.get(version)
            if cached is not None:
                self._cache.move_to_end(version)
                return cached
            try:
                snap = load_snapshot(self.store.data_dir, version, embed_fingerprint=self.store.embed_fingerprint)
            except Exception as exc:  # collected mid-load, or refused as the current one would be
                raise HistoryError(404, f"snapshot {version!r} cannot be loaded: {type(exc).__name__}") from exc
            snap.recall.present = self._readable_now
            self._cache[version] = snap
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
            return snap
