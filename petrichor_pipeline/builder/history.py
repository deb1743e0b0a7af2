"""The article history store's write side: record what a snapshot publishes, collect what nothing cites.

Every article version a published snapshot holds is written once per scope under `history/articles/` (layout
and read side in `contract.history`), so a citation's `article_version` and offsets still resolve after the
article is edited, moved or deleted and its snapshots are collected. Publishing touches each record it
references, so a record's modification time is the last time a published snapshot cited it. Collection keeps
every version a snapshot on disk or a pin (`history/pins/`, written by serving for its stored traces) cites,
and an uncited record for `history_keep_days` after it was last cited; a pin counts for `history_pin_days` at
most; all records of a version share its fate. A version a snapshot on disk holds but the store has no
record of (a deleted history folder) is written again from that snapshot's own tables first.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from petrichor_core.contract.files import write_text_atomic
from petrichor_core.contract.history import (
    PINS_DIR,
    SCOPE_FIELDS,
    ArticleRecord,
    article_record_path,
    history_dir,
    scope_key,
    stored_records,
)
from petrichor_core.contract.manifest import MANIFEST_FILE

log = logging.getLogger(__name__)

DAY_S = 86_400.0
SPAN_COLUMNS = ("article_id", "start", "end", "heading_path")
"""The chunk columns an article record's spans are made of (`record_articles`)."""


def record_articles(data_dir: Path, articles: pa.Table, chunks: pa.Table) -> int:
    """Store each (article version, scope) of a snapshot not stored yet and touch the others; returns how many
    were new. Only the new rows and their chunk spans become Python objects (after a 1 % change, 100 articles
    of 10,000 rather than every text)."""
    new = []
    for i, row in enumerate(articles.select(["article_version", *SCOPE_FIELDS]).to_pylist()):
        try:
            os.utime(article_record_path(data_dir, row["article_version"], scope_key(row)))
        except FileNotFoundError:
            new.append(i)
    if not new:
        return 0
    rows = articles.take(pa.array(new, pa.int64())).to_pylist()
    wanted = pa.array(sorted({r["article_id"] for r in rows}), pa.string())
    spans: dict[str, list[dict[str, Any]]] = {}
    own = chunks.select(list(SPAN_COLUMNS)).filter(pc.is_in(chunks.column("article_id"), value_set=wanted))
    for c in sorted(own.to_pylist(), key=lambda c: (c["article_id"], c["start"])):
        spans.setdefault(c["article_id"], []).append({"start": c["start"], "end": c["end"], "heading_path": list(c["heading_path"] or [])})
    for row in rows:
        # one file per article version and scope: no fsync each (a reader checks the record hashes to its name)
        path = article_record_path(data_dir, row["article_version"], scope_key(row))
        write_text_atomic(path, ArticleRecord(article=row, spans=spans.get(row["article_id"], [])).to_json(), durable=False)
    return len(rows)


def _snapshot_versions(snapshots_dir: Path) -> dict[str, set[str]]:
    """The article versions each complete snapshot folder still on disk holds."""
    held: dict[str, set[str]] = {}
    if not snapshots_dir.exists():
        return held
    for folder in snapshots_dir.iterdir():
        table = folder / "articles.parquet"
        if folder.is_dir() and (folder / MANIFEST_FILE).exists() and table.exists():
            held[folder.name] = set(pq.read_table(table, columns=["article_version"]).column("article_version").to_pylist())
    return held


def _restore(data_dir: Path, snapshots_dir: Path, held: dict[str, set[str]], stored: set[str]) -> None:
    """Write again, from the snapshot that holds them, the records of every version a snapshot on disk holds
    and the store has no record of (a deleted history folder)."""
    restored = 0
    for snapshot, versions in sorted(held.items()):
        if not (missing := versions - stored):
            continue
        folder = snapshots_dir / snapshot
        try:  # a repair: a snapshot collected meanwhile by another run fails it, never the publish
            articles = pq.read_table(folder / "articles.parquet")
            lost = pc.is_in(articles.column("article_version"), value_set=pa.array(sorted(missing), pa.string()))
            chunks = pq.read_table(folder / "chunks.parquet", columns=list(SPAN_COLUMNS))
            restored += record_articles(data_dir, articles.filter(lost), chunks)
        except (OSError, pa.ArrowException) as exc:
            log.warning("history records of snapshot %s not restored: %s", snapshot, exc)
            continue
        stored |= missing
    if restored:
        log.warning("restored %d lost history records from the snapshots that hold them", restored)


def _pinned_versions(data_dir: Path, oldest: float) -> set[str]:
    """Versions the pins cite; a pin older than `oldest` was left by a server long gone and is removed."""
    cited: set[str] = set()
    pins = history_dir(data_dir) / PINS_DIR
    if not pins.exists():
        return cited
    for pin in pins.glob("*.json"):
        try:
            if pin.stat().st_mtime < oldest:
                pin.unlink(missing_ok=True)
                continue
            cited.update(version for _, version in json.loads(pin.read_text(encoding="utf-8"))["cites"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a pin being written or removed right now
    return cited


def collect_history(data_dir: Path, snapshots_dir: Path, keep_days: float, pin_days: float, *, now: float | None = None) -> list[str]:
    """Restore the records of versions snapshots on disk hold and the store lacks, then remove every record of
    a version that no snapshot on disk or pin cites and that none cited within `keep_days`; returns the
    versions left with no record."""
    now = time.time() if now is None else now
    oldest = now - keep_days * DAY_S
    held = _snapshot_versions(snapshots_dir)
    stored = stored_records(data_dir)
    _restore(data_dir, snapshots_dir, held, set(stored.values()))  # what it writes is cited: nothing to collect
    cited = set().union(*held.values()) | _pinned_versions(data_dir, now - pin_days * DAY_S)
    removed, kept = set(), set()
    for path, version in stored.items():
        try:
            if version in cited or path.stat().st_mtime >= oldest:
                kept.add(version)
                continue
            path.unlink()
        except FileNotFoundError:
            continue
        removed.add(version)
    for prefix in {path.parent for path in stored}:
        try:
            prefix.rmdir()  # only when empty
        except OSError:
            pass
    if removed - kept:
        log.info("collected %d article versions no snapshot or answer cites", len(removed - kept))
    return sorted(removed - kept)
