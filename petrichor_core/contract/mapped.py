"""Snapshot tables serving memory-maps instead of parsing: an uncompressed Arrow IPC copy beside the Parquet file.

A Parquet file must be decoded into memory before anything reads it; an Arrow IPC file in one record batch is
already the in-memory layout, so serving maps it and reads a text only when a hit shows it: the texts of
articles, chunks, windows and tree nodes (about half of a loaded snapshot at 100,000 chunks) stay in the page
cache, shared by every process serving the snapshot, instead of in each one's heap. The Parquet file stays
the table every other reader uses and the one the checksums of `tables` cover; the copy has its own entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from petrichor_core.contract.manifest import verified, write_entry

MAPPED_TABLES: dict[str, tuple[str, ...]] = {
    "articles": (),
    "chunks": ("index_text",),
    "chunk_windows": ("index_text",),
    "tree_nodes": (),
}
"""The tables with a mapped copy (`manifest.tables[name]["mapped"]`), each with the columns the copy leaves
out: only tokenising reads them, and with stored postings serving never tokenises a snapshot's rows."""
LONG_TEXTS: dict[str, tuple[str, ...]] = {
    "articles": ("content",),
    "chunks": ("content",),
    "chunk_windows": ("content",),
    "tree_nodes": ("summary", "content"),
}
"""The columns of a mapped copy that hold its texts: serving checks them without reading their bytes
(`schemas.validate_table`'s `unread`), so they are read from disk only when a hit or a tool shows them."""


def write_ipc(path: Path, table: pa.Table) -> dict[str, Any]:
    """`table` as an uncompressed Arrow IPC file in one record batch (every column one contiguous array),
    written atomically; its manifest entry."""

    def write(tmp: str) -> None:
        with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table.combine_chunks())

    return write_entry(path, write)


def open_ipc(path: Path, entry: dict[str, Any]) -> pa.Table:
    """The table of `write_ipc`, hashed in one streaming pass against `entry` (reads, not the mapping, so
    the check leaves nothing resident), then memory-mapped: zero-copy views of the file."""
    verified(path, entry)
    return pa.ipc.open_file(pa.memory_map(str(path))).read_all()


def write_mapped_table(folder: Path, name: str, table: pa.Table) -> dict[str, Any] | None:
    """The mapped copy of a `MAPPED_TABLES` table in the snapshot folder and its entry; None for the others."""
    if name not in MAPPED_TABLES:
        return None
    left_out = MAPPED_TABLES[name]
    return write_ipc(folder / f"{name}.arrow", table.select([c for c in table.column_names if c not in left_out]))
