"""The article history store's write side: record what a snapshot publishes, collect what nothing cites.

Every article version a published snapshot holds is written once under `history/articles/` (layout and
read side in `contract.history`), so a citation's `article_version` and offsets still resolve after the article
is edited or deleted and its snapshots are collected. Publishing touches each record it references, so a
record's modification time is the last time a published snapshot cited it. Collection keeps every version
a retained snapshot or a pin (`history/pins/`, written by serving for its stored traces) cites, and an
uncited one for `history_keep_days` after it was last cited; a pin counts for `history_pin_days` at most.
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

from petrichor_pipeline.contract.history import (
    PINS_DIR,
    ArticleRecord,
    article_record_path,
    history_dir,
    is_article_version,
)
from petrichor_pipeline.contract.files import write_text_atomic
from petrichor_pipeline.contract.manifest import MANIFEST_FILE

log = logging.getLogger(__name__)

DAY_S = 86_400.0
SPAN_COLUMNS = ("article_id", "start", "end", "heading_path")
"""The chunk columns an article record's spans are made of (`record_articles`)."""


def record_articles(data_dir: Path, articles: pa.Table, chunks: pa.Table) -> int:
    """Store each article version of a snapshot not stored yet and touch the others; returns how many were new.
    Only the new versions' rows and chunk spans become Python objects (after a 1 % change, 100 articles of
    10,000 rather than every text)."""
    new, seen = [], set()
    for i, version in enumerate(articles.column("article_version").to_pylist()):
        if version in seen:  # two articles of one text: the first one's record, as a record is named by its version
            continue
        seen.add(version)
        try:
            os.utime(article_record_path(data_dir, version))
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
        # one file per article version: no fsync each (a reader checks the record hashes to its name)
        write_text_atomic(article_record_path(data_dir, row["article_version"]), ArticleRecord(article=row, spans=spans.get(row["article_id"], [])).to_json(), durable=False)
    return len(rows)


def _snapshot_versions(snapshots_dir: Path) -> set[str]:
    """The article versions every complete snapshot folder still on disk holds."""
    cited: set[str] = set()
    if not snapshots_dir.exists():
        return cited
    for folder in snapshots_dir.iterdir():
        table = folder / "articles.parquet"
        if folder.is_dir() and (folder / MANIFEST_FILE).exists() and table.exists():
            cited.update(pq.read_table(table, columns=["article_version"]).column("article_version").to_pylist())
    return cited


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
    """Remove the article versions no retained snapshot or pin cites and none cited within `keep_days`."""
    now = time.time() if now is None else now
    oldest = now - keep_days * DAY_S
    cited = _snapshot_versions(snapshots_dir) | _pinned_versions(data_dir, now - pin_days * DAY_S)
    root = history_dir(data_dir) / "articles"
    removed: list[str] = []
    if not root.exists():
        return removed
    for prefix in root.iterdir():
        for path in prefix.glob("*.json"):
            version = path.stem
            if not is_article_version(version) or version in cited:
                continue
            try:
                if path.stat().st_mtime >= oldest:
                    continue
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(version)
        try:
            prefix.rmdir()  # only when empty
        except OSError:
            pass
    if removed:
        log.info("collected %d article versions no snapshot or answer cites", len(removed))
    return sorted(removed)
