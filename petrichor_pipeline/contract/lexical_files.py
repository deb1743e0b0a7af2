"""The snapshot's BM25 postings as files serving memory-maps (`LEXICAL_FILES`), written and verified."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from petrichor_pipeline.contract.manifest import verified, write_entry

LEXICAL_FILES = {"postings": "lexical_index.arrow", "lengths": "lexical_lengths.arrow"}
"""The mapped lexical files beside `lexical_index.parquet`: the same postings table as an uncompressed Arrow
IPC file in one record batch, and each index's weighted document lengths (`index`, `lengths`). Serving
memory-maps both, so loading parses no posting and a term's pages load when a query scores it; the Parquet
file stays the table other readers use."""


def write_lexical_files(folder: Path, postings: pa.Table, lengths: pa.Table) -> dict[str, dict[str, Any]]:
    """Write `LEXICAL_FILES` into the snapshot folder; their manifest entries (`manifest.lexical["files"]`)."""
    out = {}
    for kind, table in (("postings", postings), ("lengths", lengths)):
        def write(tmp: str, table: pa.Table = table) -> None:
            with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table.combine_chunks())  # one batch: every column one contiguous array
        out[kind] = write_entry(folder / LEXICAL_FILES[kind], write)
    return out


def open_lexical_files(folder: Path, files: dict[str, dict[str, Any]]) -> dict[str, pa.Table]:
    """The tables of `write_lexical_files`, each hashed in one streaming pass (reads, not the mapping, so
    the check adds nothing resident), then memory-mapped: zero-copy views of the files."""
    out = {}
    for kind in LEXICAL_FILES:
        path = verified(folder / files[kind]["file"], files[kind])
        out[kind] = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    return out
