"""Read-only snapshot loading and the atomic swap.

A snapshot is loaded completely (tables, lookups, BM25 structures, LanceDB tables checked out at the
recorded versions) before one reference is replaced, so a request holds either the old or the new
snapshot for its whole life and never a mix. Loading verifies the manifest's checksums (every Parquet
file, every vector table version) and every article's `article_version`; a snapshot that fails is refused
and the old one keeps serving. With nothing serving yet (start-up), a refused `CURRENT` falls back to the
newest retained snapshot that verifies. `status()` reports the versions and the error; `health()` says
whether the store serves what `CURRENT` names.

Loading costs little beyond those checks: vector matrices, BM25 postings and the text tables (articles,
chunks, windows, tree nodes) are memory-mapped files (`contract.vectors.VECTOR_FILES`,
`contract.lexical_files.LEXICAL_FILES`, `contract.mapped.MAPPED_TABLES`) hashed in a second thread while the
other Parquet tables parse, and columns only tokenizing reads stay undecoded (`INDEX_ONLY`).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from petrichor_pipeline.contract.current import inspect_current, published_snapshots
from petrichor_pipeline.contract.lexical_files import open_lexical_files
from petrichor_pipeline.contract.mapped import LONG_TEXTS, MAPPED_TABLES, open_ipc
from petrichor_pipeline.contract.manifest import (
    Manifest,
    read_manifest,
    read_table,
    require_checksums,
    verify_articles,
    verify_file,
)
from petrichor_pipeline.contract.schemas import SCHEMAS, conform, validate_table
from petrichor_pipeline.contract.vectors import open_vector_files, open_vector_table
from petrichor_pipeline.text import lexical
from petrichor_pipeline.text.tokenize import get_tokenizer
from petrichor_serving.recall import routes
from petrichor_serving.recall.index import RecallIndex

log = logging.getLogger(__name__)


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


INDEX_ONLY = {"chunks": ("index_text",), "chunk_windows": ("index_text",), "questions": ("index_text",)}
"""Columns only tokenizing reads: with stored postings for the tokenizer, serving leaves them undecoded
(`Snapshot.tables` decodes them when a caller asks for the table)."""


def _stored_lexical(manifest: Manifest) -> bool:
    """The snapshot stores BM25 postings of the current revision of its tokenizer (a snapshot of another
    revision is re-tokenised on load, with the same tokenizer)."""
    return (
        manifest.lexical.get("table") == "lexical_index"
        and manifest.tokenizer_revision == get_tokenizer(manifest.tokenizer).revision
    )


def _mapped_lexical(manifest: Manifest) -> dict[str, dict[str, Any]] | None:
    """The manifest entries of the mapped lexical files when their postings can serve."""
    return manifest.lexical.get("files") if _stored_lexical(manifest) else None


def _mapped_tables(manifest: Manifest) -> list[str]:
    """The tables served from their mapped copies (`contract.mapped`): those that have one, when the
    snapshot's postings serve (a snapshot tokenised again needs the columns the copies leave out)."""
    if not _stored_lexical(manifest):
        return []
    return [name for name in MAPPED_TABLES if "mapped" in manifest.tables.get(name, {})]


VERIFY_THREADS = max(1, min(4, os.cpu_count() or 1))
"""Threads hashing the snapshot's mapped files at load, largest job first. The hashing is most of a load
(2.3 of its 2.5 GB at 100,000 chunks) and releases the GIL, so it spreads over the cores."""
_VerifyJob = tuple[int, tuple[str, str], Callable[..., Any], tuple[Any, ...]]


def _verify_jobs(snaps: Path, manifest: Manifest, mapped: dict[str, dict[str, Any]] | None, copies: Sequence[str], vectors_on: bool) -> list[_VerifyJob]:
    """The files a load hashes without parsing, as (bytes, key, function, arguments) jobs: each vector
    table's compact files, the lexical files and the Parquet file beside them, each mapped table's copy."""
    folder = snaps / manifest.version

    def size(*entries: dict[str, Any]) -> int:
        return sum(int(entry.get("bytes", 0)) for entry in entries)

    jobs: list[_VerifyJob] = [
        (size(*info["compact"]["files"].values()), ("vectors", name), open_vector_files, (folder, name, info))
        for name, info in manifest.vector_tables.items()
        if vectors_on and "compact" in info
    ]
    if mapped:
        jobs.append((size(*mapped.values()), ("lexical", "files"), open_lexical_files, (folder, mapped)))
        jobs.append((size(manifest.tables["lexical_index"]), ("lexical", "parquet"), verify_file, (snaps, manifest, "lexical_index")))
    jobs += [
        (size(manifest.tables[name], manifest.tables[name]["mapped"]), ("mapped", name), _open_mapped, (snaps, manifest, name))
        for name in copies
    ]
    return jobs


def _open_mapped(snaps: Path, manifest: Manifest, name: str) -> pa.Table:
    """A table's mapped copy, verified; its Parquet file is hashed too (not parsed), as every file is."""
    verify_file(snaps, manifest, name)
    return open_ipc(snaps / manifest.version / manifest.tables[name]["mapped"]["file"], manifest.tables[name]["mapped"])


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
    snaps = data_dir / "snapshots"
    manifest = read_manifest(snaps, version)
    require_checksums(manifest)
    tokenizer = get_tokenizer(manifest.tokenizer).name  # an unknown one refuses the snapshot
    mapped = _mapped_lexical(manifest)
    fp = (manifest.embed_fingerprint or {}).get("key")
    vectors_on = bool(manifest.vector_tables) and (embed_fingerprint is None or fp == embed_fingerprint)
    # The mapped files are only hashed (streaming reads that release the GIL), so `VERIFY_THREADS` threads
    # check them while this one parses the Parquet tables; every result is awaited before the snapshot exists.
    pool = ThreadPoolExecutor(max_workers=VERIFY_THREADS, thread_name_prefix="snapshot-verify")
    # Each table is validated on a thread of its own while the next one is parsed: Parquet decoding and the
    # polars checks both run outside the GIL, and the first validation pays for importing pandera.
    checks = ThreadPoolExecutor(max_workers=1, thread_name_prefix="snapshot-validate")
    try:
        omit = dict(INDEX_ONLY) if _stored_lexical(manifest) else {}
        copies = _mapped_tables(manifest)
        omit.update({name: MAPPED_TABLES[name] for name in copies})
        jobs = _verify_jobs(snaps, manifest, mapped, copies, vectors_on)
        started_jobs = {key: pool.submit(fn, *args) for _, key, fn, args in sorted(jobs, key=lambda job: -job[0])}
        compact = {key[1]: job for key, job in started_jobs.items() if key[0] == "vectors"}
        opened = {name: started_jobs[("mapped", name)] for name in copies}
        if mapped:  # the Parquet copy is checked, not parsed: serving reads the mapped files
            lexical_job, parquet_job = started_jobs[("lexical", "files")], started_jobs[("lexical", "parquet")]
        parsed = [name for name in SCHEMAS if not (mapped and name == "lexical_index") and name not in copies]
        tables: dict[str, pa.Table] = {}
        validated = []
        for name in parsed:
            tables[name] = read_table(snaps, manifest, name, omit=omit.get(name, ()))  # its sha256 checked as it is read
            validated.append(checks.submit(validate_table, name, tables[name], omit.get(name, ())))
        for name, job in opened.items():
            tables[name] = conform(name, job.result(), omit[name])
            validated.append(checks.submit(validate_table, name, tables[name], omit[name], LONG_TEXTS[name]))
        if mapped:
            lexical_files = lexical_job.result()
            parquet_job.result()
            tables["lexical_index"] = lexical_files["postings"]
            validated.append(checks.submit(validate_table, "lexical_index", tables["lexical_index"], omit.get("lexical_index", ())))
        for name, info in manifest.tables.items():
            if name in tables and tables[name].num_rows != int(info["rows"]):
                raise ValueError(f"table {name}: {tables[name].num_rows} rows, manifest says {info['rows']}")
        for job in validated:
            job.result()  # the same pandera rules the pipeline's asset checks apply
        verify_articles(tables["articles"])

        vec_tables: dict[str, Any] = {}
        note = "no vector tables in this snapshot"
        if manifest.vector_tables and not vectors_on:
            note = f"snapshot vectors are {fp!r}, the query embedder is {embed_fingerprint!r}: vector routes off"
        elif vectors_on:
            for name, info in manifest.vector_tables.items():
                if name in compact:  # memory-mapped from the snapshot folder, checksums verified
                    vec_tables[name] = compact[name].result()
                else:  # a snapshot from before compact vector files
                    vec_tables[name] = open_vector_table(data_dir / "lance", info)
            note = f"vectors {fp}"
    finally:
        pool.shutdown(cancel_futures=True)
        checks.shutdown(cancel_futures=True)
    stored = None
    if mapped:
        stored = lexical.from_table(lexical_files["postings"], lexical.sizes(tables), lexical_files["lengths"])
    elif _stored_lexical(manifest):
        stored = lexical.from_table(tables["lexical_index"], lexical.sizes(tables))  # a snapshot from before the mapped files
    recall = RecallIndex.build(
        tables["articles"],
        tables["chunks"],
        tables["questions"],
        tables["wiki_pages"],
        tables["tree_nodes"],
        vector_tables=routes.vector_tables(),
        vectors=vec_tables,
        tokenizer=tokenizer,
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


_ABSOLUTE_PATH = re.compile(r"(?<![\w.~])(?:[A-Za-z]:)?[/\\](?:[^\s'\"/\\:,;()]+[/\\])*([^\s'\"/\\:,;()]*)")


def describe_error(exc: BaseException) -> str:
    """`Type: message` with every filesystem path cut to its file name: refusals are shown to anonymous
    callers (`/healthz`), who learn which file failed but nothing of the server's layout."""
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.strerror or 'cannot read'}: {Path(str(exc.filename)).name}"
    else:
        text = str(exc)
    return f"{type(exc).__name__}: {_ABSOLUTE_PATH.sub(lambda m: m.group(1), text)}"


@dataclass(frozen=True)
class Health:
    """What `/healthz` reports: healthy only when the snapshot `CURRENT` names is the one serving."""

    ok: bool
    snapshot_version: str | None
    reason: str | None = None


class SnapshotStore:
    """Holds the current snapshot and swaps it when `CURRENT` moves; never serves a half-loaded or unverified one."""

    def __init__(self, data_dir: Path, *, embed_fingerprint: str | None = None):
        self.data_dir = Path(data_dir)
        self.embed_fingerprint = embed_fingerprint
        self._current: Snapshot | None = None
        self._failed: dict[str, str] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def current(self) -> Snapshot | None:
        return self._current

    def _load(self, version: str) -> Snapshot:
        return load_snapshot(self.data_dir, version, embed_fingerprint=self.embed_fingerprint)

    def refresh(self) -> bool:
        """Load and swap if CURRENT names a new version; True when a swap happened.

        With nothing serving yet, a `CURRENT` that is missing, refused (`contract.current.inspect_current`: a
        link, a FIFO, a directory, too large, not a folder name) or names a snapshot that fails to load is
        refused alike, and the newest retained snapshot that verifies serves instead. Reading CURRENT never
        blocks, so neither start-up nor the watcher can hang on it."""
        with self._lock:
            pointer = inspect_current(self.data_dir / "snapshots")
            if pointer.refused:
                return self._refuse(None, f"CURRENT refused: {pointer.refused}")
            version = pointer.version
            if version is None:
                if not self._retained(exclude=None):
                    return False  # nothing was ever published
                return self._refuse(None, "CURRENT is missing or empty")
            if self._current is not None and self._current.version == version:
                self._failed = None  # CURRENT names what serves (again, after a rollback)
                return False
            if self._failed is not None and self._failed["version"] == version:
                return False
            try:
                snap = self._load(version)
            except Exception as exc:
                log.error("refusing snapshot %s: %s", version, exc)
                return self._refuse(version, describe_error(exc))
            self._current = snap  # the swap: one reference assignment
            self._failed = None
            log.info("serving snapshot %s (loaded in %.2fs)", version, snap.load_seconds)
            return True

    def _refuse(self, version: str | None, error: str) -> bool:
        """Record why CURRENT is not served (once per cause); with nothing serving, fall back."""
        refused = {"version": version, "error": error}
        if self._failed == refused:
            return False
        if version is None:
            log.error("refusing CURRENT: %s", error)
        self._failed = refused
        return self._current is None and self._fall_back(refused=version)

    def _retained(self, *, exclude: str | None) -> list[str]:
        """The published snapshots on disk, newest first (one a build staged but never published is not one)."""
        return [v for v in reversed(published_snapshots(self.data_dir / "snapshots")) if v != exclude]

    def _fall_back(self, *, refused: str | None) -> bool:
        """Serve the newest retained snapshot that verifies, newest first; True when one loaded."""
        for version in self._retained(exclude=refused):
            try:
                snap = self._load(version)
            except Exception as exc:
                log.error("fallback snapshot %s refused too: %s", version, exc)
                continue
            self._current = snap
            log.warning("CURRENT (%s) refused; serving the retained snapshot %s", refused or "missing", version)
            return True
        return False

    def health(self) -> Health:
        cur, failed = self._current, self._failed
        version = cur.version if cur else None
        if failed is not None:
            serving = f"serving the retained snapshot {version}" if cur else "no snapshot is served"
            if failed["version"] is None:
                return Health(False, version, f"{failed['error']}; {serving}")
            return Health(False, version, f"CURRENT names {failed['version']}, which was refused ({failed['error']}); {serving}")
        if cur is None:
            return Health(False, None, "no snapshot has been published: run `petrichor build`")
        return Health(True, version)

    def status(self, *, rows: Callable[[Snapshot], dict[str, int]] | None = None) -> dict[str, Any]:
        """The served snapshot, the refusal and CURRENT's pointer; `rows(snapshot)` replaces the manifest's
        row counts (of every tenant) with what a caller may see."""
        cur = self._current
        return {
            "current": None
            if cur is None
            else {
                "version": cur.version,
                "created_at": cur.manifest.created_at,
                "parent_version": cur.manifest.parent_version,
                "rows": cur.manifest.row_counts if rows is None else rows(cur),
                "vector_tables": {k: v.get("version") for k, v in cur.manifest.vector_tables.items()},
                "vectors": cur.vector_note,
                "loaded_at": cur.loaded_at,
                "load_seconds": round(cur.load_seconds, 3),
            },
            "refused": self._failed,
            "pointer": inspect_current(self.data_dir / "snapshots").version,
        }

    def watch(self, interval_s: float) -> None:
        """Poll CURRENT in a daemon thread until `stop()`."""

        def loop() -> None:
            while not self._stop.wait(interval_s):
                try:
                    self.refresh()
                except Exception:  # the watcher must outlive any single failure
                    log.exception("snapshot refresh failed")

        self._thread = threading.Thread(target=loop, name="snapshot-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
