"""The snapshot's BM25 postings as files serving memory-maps (`LEXICAL_FILES`), written and verified."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from petrichor_core.contract.mapped import open_ipc, write_ipc

LEXICAL_FILES = {"postings": "lexical_index.arrow", "lengths": "lexical_lengths.arrow"}
"""The mapped lexical files beside `lexical_index.parquet`: the same postings table as an uncompressed Arrow
IPC file in one record batch, and each index's weighted document lengths (`index`, `lengths`). Serving
memory-maps both, so loading parses no posting and a term's pages load when a query scores it; the Parquet
file stays the table other readers use."""


def write_lexical_files(folder: Path, postings: pa.Table, lengths: pa.Table) -> dict[str, dict[str, Any]]:
    """Write `LEXICAL_FILES` into the snapshot folder; their manifest entries (`manifest.lexical["files"]`)."""
    return {kind: write_ipc(folder / LEXICAL_FILES[kind], table) for kind, table in (("postings", postings), ("lengths", lengths))}


def open_lexical_files(folder: Path, files: dict[str, dict[str, Any]]) -> dict[str, pa.Table]:
    """The tables of `write_lexical_files`, verified and memory-mapped (`mapped.open_ipc`)."""
    return {kind: open_ipc(folder / files[kind]["file"], files[kind]) for kind in LEXICAL_FILES}
