"""The one reader of a snapshot: what reading `snapshots/<version>/` checks, for every side that reads it.

The publish check (`current.verify_snapshot`, run by `petrichor build` and the `snapshot_checksums_verify`
asset check) and serving's load (`petrichor_serving.snapshot_load.load_snapshot`) both open a snapshot here
and run the checks this module lists, so they cannot drift apart. Opening reads the manifest and refuses,
before any data file is touched, a manifest that is missing, unreadable or of another schema version, one
without a checksum for every table and vector table, and a tokenizer no build knows. Every file is then
checked against its manifest entry (present, size and sha256) in one of two ways:

- `file_checks()`: the files hashed without being parsed, as `FileCheck` records (largest first is the
  caller's choice; serving spreads them over threads): compact vector files and the LanceDB table versions,
  the mapped lexical postings and their Parquet file, each mapped table copy and its Parquet file;
- `read_table(name)` for the tables in `parsed`: hashed as they are read. The publish check parses nothing:
  `file_checks(every_file=True)` hashes those Parquet files instead, and checks the files of every
  representation the manifest records (both vector stores, postings of an older tokenizer revision), which
  some server may read, where serving checks those it reads.

What only a parsed table shows (row counts against the manifest, article texts against their
`article_version`) is `check_rows` and `check_articles`, for the caller that parsed them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa

from petrichor_core.contract.lexical_files import open_lexical_files
from petrichor_core.contract.manifest import (
    IntegrityError,
    Manifest,
    read_manifest,
    read_table,
    require_checksums,
    verified,
    verify_articles,
    verify_file,
)
from petrichor_core.contract.mapped import MAPPED_TABLES, open_ipc
from petrichor_core.contract.schemas import SCHEMAS
from petrichor_core.contract.vectors import open_vector_files, open_vector_table
from petrichor_core.text.tokenize import get_tokenizer

INDEX_ONLY: dict[str, tuple[str, ...]] = {"chunks": ("index_text",), "chunk_windows": ("index_text",), "questions": ("index_text",)}
"""Columns only tokenizing reads: with stored postings of the current tokenizer revision, a reader leaves
them undecoded (the checksum still covers the whole file)."""


@dataclass(frozen=True)
class FileCheck:
    """One file, or the files of one structure, checked against the manifest without being parsed."""

    key: tuple[str, str]
    """(kind, name): ("vectors" | "lance" | "mapped" | "table", table name), ("lexical", "files" | "parquet")."""
    size: int
    """The bytes it reads, for scheduling the largest first."""
    run: Callable[[], Any]
    """Raises `IntegrityError` naming the file when it differs from the manifest; returns what it opened (a
    vector store, the mapped postings, a mapped table) or None."""


@dataclass(frozen=True)
class SnapshotReader:
    """One snapshot opened for reading: its manifest, the choices a reader makes from it, and its checks."""

    data_dir: Path
    manifest: Manifest
    tokenizer: str
    """The tokenizer the build indexed with (known to this code: opening refuses one it does not know)."""
    stored_lexical: bool
    """The snapshot's BM25 postings are of the current revision of its tokenizer, so they serve as stored
    (otherwise the reader tokenises the rows again, with the same tokenizer)."""
    vectors_on: bool
    """The vector tables serve: there are some, and the query embedder (when named) is the one they hold."""
    omit: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Columns left undecoded per table (`INDEX_ONLY`, and the columns a mapped copy leaves out)."""

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def snaps(self) -> Path:
        return self.data_dir / "snapshots"

    @property
    def folder(self) -> Path:
        return self.snaps / self.manifest.version

    @property
    def embed_key(self) -> str | None:
        """The fingerprint key of the snapshot's vectors."""
        return (self.manifest.embed_fingerprint or {}).get("key")

    @property
    def lexical_files(self) -> dict[str, dict[str, Any]] | None:
        """The manifest entries of the mapped postings when they serve (`stored_lexical`)."""
        return self.manifest.lexical.get("files") if self.stored_lexical else None

    @property
    def copies(self) -> list[str]:
        """The tables served from their mapped copies (`contract.mapped`)."""
        return _copies(self.manifest, self.stored_lexical)

    @property
    def parsed(self) -> list[str]:
        """The tables a reader parses from Parquet (`read_table`): all but the mapped ones."""
        return [name for name in SCHEMAS if not (self.lexical_files and name == "lexical_index") and name not in self.copies]

    def file_checks(self, *, every_file: bool = False) -> list[FileCheck]:
        """Every check `CHECKS` makes of this snapshot's files. `every_file`: also the Parquet files of the
        `parsed` tables, and every file the manifest records whether or not this reader serves it."""
        return [check for make in CHECKS for check in make(self, every_file)]

    def read_table(self, name: str) -> pa.Table:
        """A `parsed` table, hashed as it is read and conformed to its schema (`omit` columns undecoded)."""
        try:
            return read_table(self.snaps, self.manifest, name, omit=self.omit.get(name, ()))
        except FileNotFoundError:
            raise IntegrityError(f"{self.manifest.tables[name]['file']}: missing") from None

    def check_rows(self, tables: Mapping[str, pa.Table]) -> None:
        """Each parsed table holds the rows the manifest counts."""
        for name, info in self.manifest.tables.items():
            if name in tables and tables[name].num_rows != int(info["rows"]):
                raise IntegrityError(f"table {name}: {tables[name].num_rows} rows, the manifest records {info['rows']}")

    def check_articles(self, articles: pa.Table) -> None:
        """Every article's text is still what its `article_version` hashed."""
        verify_articles(articles)


def open_snapshot(data_dir: Path, version: str, *, embed_fingerprint: str | None = None) -> SnapshotReader:
    """Open `snapshots/<version>` for reading: the manifest read and checked, nothing else touched yet.

    `embed_fingerprint`: the query embedder's fingerprint key; vectors of another model do not serve (and are
    not read). None: the vectors serve whatever their model."""
    try:
        manifest = read_manifest(data_dir / "snapshots", version)
    except (OSError, ValueError, TypeError) as exc:
        raise IntegrityError(f"manifest of {version}: {type(exc).__name__}: {exc}") from exc
    require_checksums(manifest)
    tokenizer = get_tokenizer(manifest.tokenizer)  # an unknown one refuses the snapshot
    stored = manifest.lexical.get("table") == "lexical_index" and manifest.tokenizer_revision == tokenizer.revision
    key = (manifest.embed_fingerprint or {}).get("key")
    vectors_on = bool(manifest.vector_tables) and (embed_fingerprint is None or key == embed_fingerprint)
    omit = dict(INDEX_ONLY) if stored else {}
    omit.update({name: MAPPED_TABLES[name] for name in _copies(manifest, stored)})
    return SnapshotReader(data_dir, manifest, tokenizer.name, stored, vectors_on, omit)


def _copies(manifest: Manifest, stored_lexical: bool) -> list[str]:
    """The tables with a mapped copy, when the postings serve: a snapshot tokenised again needs the columns
    the copies leave out, so it parses those tables from Parquet."""
    if not stored_lexical:
        return []
    return [name for name in MAPPED_TABLES if "mapped" in manifest.tables.get(name, {})]


# ------------------------------------------------------------------------------------------ the checks


def _size(*entries: Mapping[str, Any]) -> int:
    return sum(int(entry.get("bytes", 0)) for entry in entries)


def _vector_checks(r: SnapshotReader, every_file: bool) -> Iterator[FileCheck]:
    """Each vector table's compact files (what serving maps) and, for a snapshot without them or when every
    file is checked, its LanceDB table at the recorded version, rows against the digest."""
    for name, info in r.manifest.vector_tables.items():
        if not (r.vectors_on or every_file):
            continue
        if "compact" in info:
            yield FileCheck(("vectors", name), _size(*info["compact"]["files"].values()), partial(open_vector_files, r.folder, name, info))
        if "compact" not in info or every_file:
            yield FileCheck(("lance", name), 0, partial(open_vector_table, r.data_dir / "lance", info))


def _lexical_checks(r: SnapshotReader, every_file: bool) -> Iterator[FileCheck]:
    """The mapped BM25 postings and the Parquet file beside them (checked, not parsed, where they serve)."""
    files = r.manifest.lexical.get("files") if every_file else r.lexical_files
    if files:
        yield FileCheck(("lexical", "files"), _size(*files.values()), lambda: open_lexical_files(r.folder, files))
    if r.lexical_files:
        yield FileCheck(("lexical", "parquet"), _size(r.manifest.tables["lexical_index"]), lambda: verify_file(r.snaps, r.manifest, "lexical_index"))


def _open_mapped(r: SnapshotReader, name: str) -> pa.Table:
    """A table's mapped copy, verified; its Parquet file is hashed too (not parsed), as every file is."""
    verify_file(r.snaps, r.manifest, name)
    mapped = r.manifest.tables[name]["mapped"]
    return open_ipc(r.folder / mapped["file"], mapped)


def _verify_copy(r: SnapshotReader, info: dict[str, Any]) -> Path:
    """A mapped copy that does not serve, hashed alone."""
    return verified(r.folder / info["mapped"]["file"], info["mapped"])


def _mapped_checks(r: SnapshotReader, every_file: bool) -> Iterator[FileCheck]:
    """Each mapped table copy that serves, with its Parquet file; when every file is checked, the copies a
    snapshot tokenised again leaves unread too (hashed alone: their Parquet file is `parsed`)."""
    for name in r.copies:
        info = r.manifest.tables[name]
        yield FileCheck(("mapped", name), _size(info, info["mapped"]), partial(_open_mapped, r, name))
    if every_file:
        for name, info in r.manifest.tables.items():
            if "mapped" in info and name not in r.copies:
                yield FileCheck(("mapped", name), _size(info["mapped"]), partial(_verify_copy, r, info))


def _parsed_files(r: SnapshotReader, every_file: bool) -> Iterator[FileCheck]:
    """The Parquet files of the `parsed` tables, hashed without parsing, for a caller that parses nothing."""
    if every_file:
        for name in r.parsed:
            yield FileCheck(("table", name), _size(r.manifest.tables[name]), partial(verify_file, r.snaps, r.manifest, name))


CHECKS: tuple[Callable[[SnapshotReader, bool], Iterator[FileCheck]], ...] = (_vector_checks, _lexical_checks, _mapped_checks, _parsed_files)
"""Every kind of file check a snapshot gets, read at call time: a check added here is made by every reader."""
