"""Reading a published snapshot's tables in a comparable form (rows sorted by their key)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

KEYS = {
    "articles": ("article_id",),
    "chunks": ("chunk_id",),
    "chunk_windows": ("window_id",),
    "questions": ("question_id",),
    "tree_nodes": ("node_key",),
    "wiki_pages": ("kb_id", "tenant", "page_key"),
    "wiki_links": ("kb_id", "tenant", "from_page_key", "to_page_key", "link_type"),
    "wiki_sources": ("kb_id", "tenant", "page_key", "article_id", "chunk_id"),
}


def current_version(data_dir: Path) -> str:
    return (data_dir / "snapshots" / "CURRENT").read_text().strip()


def snapshot_rows(data_dir: Path, table: str, version: str | None = None) -> list[dict]:
    version = version or current_version(data_dir)
    rows = pq.read_table(data_dir / "snapshots" / version / f"{table}.parquet").to_pylist()
    return sorted(rows, key=lambda r: tuple(str(r[k]) for k in KEYS[table]))
