"""Loading one snapshot: read through the contract's one reader (`contract.reader`), verified, and built into
the read-only `Snapshot` a request holds for its whole life.

Every check is the reader's (the publish check runs the same ones): the manifest, the file checks, the
tables parsed with their checksums, then their rows and article versions. Loading costs little beyond those
checks: vector matrices, BM25 postings and the text tables (articles, chunks, windows, tree nodes) are
memory-mapped files (`contract.vectors.VECTOR_FILES`, `contract.lexical_files.LEXICAL_FILES`,
`contract.mapped.MAPPED_TABLES`) hashed on `VERIFY_THREADS` threads while this one parses the other Parquet
tables, and columns only tokenizing reads stay undecoded (`contract.reader.INDEX_ONLY`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from petrichor_core.contract.manifest import Manifest, read_table
from petrichor_core.contract.mapped import LONG_TEXTS
from petrichor_core.contract.reader import INDEX_ONLY, open_snapshot
from petrichor_core.contract.schemas import conform, validate_table
from petrichor_core.text import lexical
from petrichor_serving.recall import routes
from petrichor_serving.recall.index import RecallIndex

__all__ = ["INDEX_ONLY", "VERIFY_THREADS", "RowGroups", "Snapshot", "SnapshotTables", "TableRows", "load_snapshot"]


@dataclass
class Snapshot:
    manifest: Manifest
    tables: Mapping[str, pa.Table]
    """Every table but `lexical_index` (its postings live on in `recall.bm25`)."""
    recall: RecallIndex
    articles: Mapping[str, dict[str, Any]]
    """article_id -> row (`TableRows`: built per lookup from the Arrow table, as are chunks, windows, nodes)"""
    chunks: Mapping[str, dict[str, Any]]
    chunks_by_article: Mapping[str, list[str]]
    windows: Mapping[str, dict[str, Any]]
    """window_id -> chunk window row (a child window of a chunk, offsets into the article)"""
    questions_by_chunk: Mapping[str, list[str]]
    pages: dict[tuple[str, str, str], dict[str, Any]]
    """(kb_id, tenant, page_key) -> wiki page row"""
    links_from: dict[tuple[str, str, str], list[dict[str, Any]]]
    links_to: dict[tuple[str, str, str], list[dict[str, Any]]]
    nodes: Mapping[str, dict[str, Any]]
    nodes_by_article: Mapping[str, list[str]]
    vectors_enabled: bool
    vector_note: str
    loaded_at: float = field(default_factory=time.time)
    load_seconds: float = 0.0

    @property
    def version(self) -> str:
        return self.manifest.version


class TableRows(Mapping[str, dict[str, Any]]):
    """key -> one row of a snapshot table as a dict, built when it is asked for: the snapshot holds its
    tables as Arrow and a position per key, not a dict per row. Each lookup returns a fresh dict."""

    def __init__(self, table: pa.Table, row_of: Mapping[str, int]):
        self._table, self._row_of = table, row_of

    def __getitem__(self, key: str) -> dict[str, Any]:
        if not isinstance(key, str):  # an id from a request of the wrong shape is simply not there
            raise KeyError(key)
        return self._table.slice(self._row_of[key], 1).to_pylist()[0]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._row_of

    def __iter__(self) -> Iterator[str]:
        return iter(self._row_of)

    def __len__(self) -> int:
        return len(self._row_of)

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:  # type: ignore[override]
        """Every row in table order, converted a batch at a time."""
        keys = iter(self._row_of)
        for batch in self._table.to_batches(max_chunksize=4096):
            for row in batch.to_pylist():
                yield next(keys), row

    def values(self) -> Iterator[dict[str, Any]]:  # type: ignore[override]
        return (row for _, row in self.items())


class RowGroups(Mapping[str, list[str]]):
    """A parent's key (an article, a chunk) -> the values of its child rows in table order (its chunk ids,
    node keys, generated questions), read from the child table's parent rows when asked: a position array,
    not a Python list per parent, whose strings (300,000 questions at 100,000 chunks) stay in Arrow."""

    def __init__(self, parent_row_of: Mapping[str, int], parent_keys: Sequence[str], parent_rows: np.ndarray, values: Sequence[str]):
        self._row_of, self._keys, self._values = parent_row_of, parent_keys, values
        rows = np.asarray(parent_rows, dtype=np.int64)
        kept = np.flatnonzero(rows >= 0)
        self._order = kept[np.argsort(rows[kept], kind="stable")]  # child rows by parent, table order within one
        self._indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[kept], minlength=len(parent_keys)))])
        firsts = np.unique(rows[kept], return_index=True)
        self._parents = firsts[0][np.argsort(kept[firsts[1]], kind="stable")]  # parents by their first child row

    def _span(self, parent: int) -> np.ndarray:
        return self._order[self._indptr[parent] : self._indptr[parent + 1]]

    def __getitem__(self, key: str) -> list[str]:
        parent = self._row_of.get(key) if isinstance(key, str) else None
        if parent is None or self._indptr[parent + 1] == self._indptr[parent]:
            raise KeyError(key)
        return [self._values[int(r)] for r in self._span(parent)]

    def __iter__(self) -> Iterator[str]:
        return (self._keys[int(p)] for p in self._parents)

    def __len__(self) -> int:
        return len(self._parents)


VERIFY_THREADS = max(1, min(4, os.cpu_count() or 1))
"""Threads running the reader's file checks at load, largest first. The hashing is most of a load (2.3 of
its 2.5 GB at 100,000 chunks) and releases the GIL, so it spreads over the cores."""


class SnapshotTables(Mapping[str, pa.Table]):
    """The snapshot's tables, whole: a table loaded without its `INDEX_ONLY` columns is read again in full
    (checksum verified) the first time someone asks for it, e.g. to rebuild BM25 with another tokenizer."""

    def __init__(self, snaps: Path, manifest: Manifest, loaded: dict[str, pa.Table], omitted: Mapping[str, tuple[str, ...]]):
        self._snaps, self._manifest, self._loaded = snaps, manifest, loaded
        self._partial = {name for name in loaded if omitted.get(name)}
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> pa.Table:
        if name in self._partial:
            with self._lock:
                if name in self._partial:
                    self._loaded[name] = read_table(self._snaps, self._manifest, name)
                    self._partial.discard(name)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded)

    def __len__(self) -> int:
        return len(self._loaded)


def load_snapshot(data_dir: Path, version: str, *, embed_fingerprint: str | None) -> Snapshot:
    """Load one snapshot completely; raises on any inconsistency so the caller can refuse it.

    Queries are tokenised with the tokenizer the manifest records (the build's `PETRICHOR_TOKENIZER`):
    postings and query terms must come from the same one, whatever the server's own environment says."""
    started = time.perf_counter()
    reader = open_snapshot(data_dir, version, embed_fingerprint=embed_fingerprint)
    manifest, omit, mapped, copies = reader.manifest, reader.omit, reader.lexical_files, reader.copies
    fp = reader.embed_key
    # The file checks only hash (streaming reads that release the GIL), so `VERIFY_THREADS` threads run them
    # while this one parses the Parquet tables; every result is awaited before the snapshot exists.
    pool = ThreadPoolExecutor(max_workers=VERIFY_THREADS, thread_name_prefix="snapshot-verify")
    # Each table is validated on a thread of its own while the next one is parsed: Parquet decoding and the
    # polars checks both run outside the GIL, and the first validation pays for importing pandera.
    checks = ThreadPoolExecutor(max_workers=1, thread_name_prefix="snapshot-validate")
    try:
        files = {check.key: pool.submit(check.run) for check in sorted(reader.file_checks(), key=lambda check: -check.size)}
        tables: dict[str, pa.Table] = {}
        validated = []
        for name in reader.parsed:
            tables[name] = reader.read_table(name)  # its sha256 checked as it is read
            validated.append(checks.submit(validate_table, name, tables[name], omit.get(name, ())))
        for name in copies:
            tables[name] = conform(name, files[("mapped", name)].result(), omit[name])
            validated.append(checks.submit(validate_table, name, tables[name], omit[name], LONG_TEXTS[name]))
        if mapped:  # the Parquet copy is checked, not parsed: serving reads the mapped files
            lexical_files = files[("lexical", "files")].result()
            tables["lexical_index"] = lexical_files["postings"]
            validated.append(checks.submit(validate_table, "lexical_index", tables["lexical_index"], omit.get("lexical_index", ())))
        opened = {key: job.result() for key, job in files.items()}  # every check the reader lists has passed
        reader.check_rows(tables)
        for job in validated:
            job.result()  # the same pandera rules the pipeline's asset checks apply
        reader.check_articles(tables["articles"])

        vec_tables: dict[str, Any] = {}
        note = "no vector tables in this snapshot"
        if manifest.vector_tables and not reader.vectors_on:
            note = f"snapshot vectors are {fp!r}, the query embedder is {embed_fingerprint!r}: vector routes off"
        elif reader.vectors_on:
            # memory-mapped from the snapshot folder, or the LanceDB table of a snapshot from before compact files
            vec_tables = {name: opened.get(("vectors", name), opened.get(("lance", name))) for name in manifest.vector_tables}
            note = f"vectors {fp}"
    finally:
        pool.shutdown(cancel_futures=True)
        checks.shutdown(cancel_futures=True)
    stored = None
    if mapped:
        stored = lexical.from_table(lexical_files["postings"], lexical.sizes(tables), lexical_files["lengths"])
    elif reader.stored_lexical:
        stored = lexical.from_table(tables["lexical_index"], lexical.sizes(tables))  # a snapshot from before the mapped files
    snaps = reader.snaps
    recall = RecallIndex.build(
        tables["articles"],
        tables["chunks"],
        tables["questions"],
        tables["wiki_pages"],
        tables["tree_nodes"],
        vector_tables=routes.vector_tables(),
        vectors=vec_tables,
        tokenizer=reader.tokenizer,
        lexical=stored,
        chunk_windows=tables["chunk_windows"],
    )
    page_rows = tables["wiki_pages"].to_pylist()  # a few per thousand chunks; the wiki tools scan them
    link_rows = tables["wiki_links"].to_pylist()
    links_from: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    links_to: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for link in link_rows:
        links_from.setdefault((link["kb_id"], link["tenant"], link["from_page_key"]), []).append(link)
        links_to.setdefault((link["kb_id"], link["tenant"], link["to_page_key"]), []).append(link)
    tables.pop("lexical_index", None)  # its postings live on in `recall.bm25`, as views of its (mapped) buffers
    snap = Snapshot(
        manifest=manifest,
        tables=SnapshotTables(snaps, manifest, tables, omit),
        recall=recall,
        articles=TableRows(tables["articles"], recall.articles.row_of),
        chunks=TableRows(tables["chunks"], recall.chunks.row_of),
        chunks_by_article=RowGroups(recall.articles.row_of, recall.articles.ids, recall.chunks.article_rows, recall.chunks.ids),
        windows=TableRows(tables["chunk_windows"].select(["window_id", "chunk_id", "start", "end"]), recall.windows.row_of),
        questions_by_chunk=RowGroups(recall.chunks.row_of, recall.chunks.ids, recall.questions.chunk_rows, recall.questions.questions),
        pages={(r["kb_id"], r["tenant"], r["page_key"]): r for r in page_rows},
        links_from=links_from,
        links_to=links_to,
        nodes=TableRows(tables["tree_nodes"], recall.tree.row_of),
        nodes_by_article=RowGroups(recall.articles.row_of, recall.articles.ids, recall.tree.article_rows, recall.tree.keys),
        vectors_enabled=bool(vec_tables),
        vector_note=note,
    )
    snap.load_seconds = time.perf_counter() - started
    return snap
