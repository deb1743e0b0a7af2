"""Assemble the warehouse into a snapshot and publish it: whole or not at all.

Order matters for atomicity: Parquet tables into a fresh `snapshots/<version>/` folder, LanceDB
tables updated (each write is a new table version, so snapshots already published keep reading theirs),
then the manifest (with each file's sha256 and each vector table version's row digest, which loading
verifies), then `CURRENT` via `os.replace`. A crash anywhere before the last rename leaves the
previous snapshot serving; the abandoned folder is collected later. With an object store the folder is
uploaded before the local `CURRENT` moves and the store's `CURRENT` is moved by a conditional write
(`object_store`); a build that loses that race removes its folder and fails. Any other failure before
`CURRENT` moves (a full disk, a write error) removes the folder as well, so no partial snapshot is left.

A snapshot is staged only when its articles are exactly the corpus scan's (`check_matches_scan`): a
warehouse that lost buckets or holds another corpus' rows refuses the publish instead of serving them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from petrichor_core.config import BUCKETS
from petrichor_core.contract.current import collect_garbage, mark_staged, point_current, read_current
from petrichor_core.contract.files import full_disk_named, write_parquet_atomic
from petrichor_core.contract.lexical_files import write_lexical_files
from petrichor_core.contract.manifest import Manifest, file_entry, new_version, utc_now_iso, write_manifest
from petrichor_core.contract.mapped import write_mapped_table
from petrichor_core.contract.schemas import SCHEMAS, SOURCE_SCHEMA, VECTOR_TABLES, conform
from petrichor_core.contract.vectors import IDENTICAL_SOURCES, read_vector_rows, vector_digest, write_identical_file, write_vector_files
from petrichor_core.object_store import ObjectStore, PublishConflict, collect_remote, publish_remote
from petrichor_core.text import bm25, lexical
from petrichor_core.text.tokenize import get_tokenizer
from petrichor_core.versions import BUILD_VERSION, CHUNK_ALGORITHM_VERSION, SCHEMA_VERSION
from petrichor_pipeline.builder import lexical_parts
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.history import SPAN_COLUMNS, collect_history, record_articles
from petrichor_pipeline.builder.steps.wiki_pages import replaced_pages

log = logging.getLogger(__name__)

WIKI_TABLES = ("wiki_pages", "wiki_links", "wiki_sources")
PUBLISH_THREADS = min(4, os.cpu_count() or 1)
"""Buckets' postings merged, and snapshot files written, side by side: Arrow reads, encodes, compresses and
hashes without holding the GIL, which one thread left to a single core."""


class IncompleteSnapshot(ValueError):
    """The assembled snapshot's articles are not the corpus scan's: publishing it would drop or misstate
    articles that no per-file error explains."""


def check_matches_scan(ctx: BuildContext, articles: pa.Table) -> None:
    """Refuse a snapshot whose (article id, version) pairs differ from the scan the build works from.

    Files the scan could not read are its per-file errors and are not among its articles, so every scanned
    article must be in the snapshot, at the scanned version, and nothing else may be."""
    scan = ctx.scan()
    want = {(a.article_id, a.article_version) for a in scan.articles}
    have = set(zip(articles.column("article_id").to_pylist(), articles.column("article_version").to_pylist()))
    if want == have:
        return
    want_ids, have_ids = {a for a, _ in want}, {a for a, _ in have}
    paths = {a.article_id: a.path for a in scan.articles}

    def listed(items: list[str]) -> str:
        return ", ".join(items[:5]) + (", …" if len(items) > 5 else "")

    missing = sorted(paths[a] for a in want_ids - have_ids)
    older = sorted(paths[a] for a, _ in want - have if a in have_ids)
    foreign = len(have_ids - want_ids)
    parts = [f"{len(have_ids & want_ids)} of the corpus scan's {len(want_ids)} articles are built"]
    if missing:
        parts.append(f"missing {len(missing)} ({listed(missing)})")
    if older:
        parts.append(f"{len(older)} at another version ({listed(older)})")
    if foreign:
        parts.append(f"{foreign} not in the corpus")
    raise IncompleteSnapshot(
        "refusing to publish a snapshot that does not match the corpus: "
        + "; ".join(parts)
        + ". The previous snapshot keeps serving; `petrichor build --full` rebuilds every bucket."
    )


@dataclass
class PublishResult:
    manifest: Manifest
    removed_snapshots: list[str] = field(default_factory=list)
    removed_article_versions: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _bucket_tables(ctx: BuildContext, bucket: str) -> dict[str, pa.Table]:
    """One bucket's slice of the per-article snapshot tables, restricted to the articles that exist now."""
    wh = ctx.warehouse

    def read(asset: str, schema: pa.Schema) -> pa.Table:
        t = wh.read(asset, bucket, schema)
        return t if t is not None else schema.empty_table()

    sources = read("articles", SOURCE_SCHEMA)
    live = sources.column("article_id")

    def only_live(t: pa.Table) -> pa.Table:
        return t.filter(pc.is_in(t.column("article_id"), value_set=live)) if t.num_rows else t

    chunks = only_live(read("chunks", SCHEMAS["chunks"]))
    chunk_ids = chunks.column("chunk_id")
    questions = only_live(read("questions", SCHEMAS["questions"]))
    questions = questions.filter(pc.is_in(questions.column("chunk_id"), value_set=chunk_ids)) if questions.num_rows else questions
    windows = only_live(read("chunk_windows", SCHEMAS["chunk_windows"]))
    windows = windows.filter(pc.is_in(windows.column("chunk_id"), value_set=chunk_ids)) if windows.num_rows else windows
    return {
        "articles": sources,
        "chunks": chunks,
        "chunk_windows": windows,
        "questions": questions,
        "tree_nodes": only_live(read("page_index", SCHEMAS["tree_nodes"])),
    }


def assemble_tables(ctx: BuildContext) -> dict[str, pa.Table]:
    """The snapshot's Parquet tables from every bucket, restricted to the articles that exist now.

    Buckets are concatenated in bucket order; the lexical index merges per-article postings, re-tokenising
    only the articles rebuilt since they were last indexed (`lexical_parts`).
    """
    with ThreadPoolExecutor(max_workers=PUBLISH_THREADS) as pool:
        tables, postings = _assemble(ctx, pool)
        tables["lexical_index"], _ = postings()
    return tables


BUCKET_SOURCES = ("articles", *lexical_parts.SIGNED_ASSETS)
"""The bucket steps whose files `read_buckets` reads: once a build's bucket run is past them for every bucket
it builds, the buckets' half of the snapshot can be read while its last steps run (`bucket_prefetch`)."""


@dataclass
class BucketReads:
    """The half of a snapshot that only the bucket steps feed: each bucket's own tables (`_bucket_tables`, in
    bucket order) and each article index's postings merged over the buckets (`lexical_parts.bucket_index`),
    the merges still running on the pool that read the buckets."""

    own: list[dict[str, pa.Table]]
    merges: dict[str, Future[lexical_parts.Merged]]


def read_buckets(ctx: BuildContext, pool: ThreadPoolExecutor) -> BucketReads:
    """Every bucket's tables and postings parts, read on `pool`; the article indexes left merging on it, the
    largest first, ahead of whatever is queued next."""
    wh = ctx.warehouse
    tokenizer = ctx.settings.lexical_tokenizer

    def read(bucket: str) -> tuple[dict[str, pa.Table], lexical_parts.BucketParts]:
        own = _bucket_tables(ctx, bucket)
        return own, lexical_parts.bucket_parts(wh, bucket, own, tokenizer)

    done = list(pool.map(read, BUCKETS))
    parts = [p for _, p in done]
    largest_first = sorted(lexical_parts.BUCKET_INDEXES, key=lambda name: -sum(p.sizes[name] for p in parts))
    return BucketReads([own for own, _ in done], {name: pool.submit(lexical_parts.bucket_index, parts, name) for name in largest_first})


def _assemble(
    ctx: BuildContext, pool: ThreadPoolExecutor, prefetched: Future[BucketReads] | None = None
) -> tuple[dict[str, pa.Table], Callable[[], tuple[pa.Table, pa.Table]]]:
    """`assemble_tables` but the lexical index, which is left merging on `pool` (the wiki's postings are
    computed beside the buckets' reads, or beside the tables' writes when the buckets were `prefetched`), so
    the tables can be written meanwhile; the second value waits for the index and gives its postings and
    lengths (`lexical_parts.merged_table`)."""
    wh = ctx.warehouse
    tokenizer = ctx.settings.lexical_tokenizer
    wiki = {name: t if (t := wh.read(name, None, SCHEMAS[name])) is not None else SCHEMAS[name].empty_table() for name in WIKI_TABLES}
    earlier = lambda keys: replaced_pages(ctx, keys, list(lexical.WIKI_COLUMNS))  # noqa: E731
    wiki_postings = pool.submit(lexical_parts.wiki_index, wh, wiki, tokenizer, earlier)
    reads = prefetched.result() if prefetched is not None else read_buckets(ctx, pool)
    merges = {**reads.merges, "wiki": wiki_postings}
    return _assembled(ctx, reads.own, wiki), lambda: lexical_parts.merged_table({n: m.result() for n, m in merges.items()})


def _assembled(ctx: BuildContext, own: list[dict[str, pa.Table]], wiki: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """The snapshot's tables from each bucket's own tables (in bucket order) and the wiki's."""
    per_bucket = dict(zip(BUCKETS, own))

    def concat(name: str, schema: pa.Schema) -> pa.Table:
        tables = [per_bucket[b][name] for b in BUCKETS if per_bucket[b][name].num_rows]
        return pa.concat_tables(tables).cast(schema) if tables else schema.empty_table()

    sources = concat("articles", SOURCE_SCHEMA)
    chunks = concat("chunks", SCHEMAS["chunks"])
    counts = pc.value_counts(chunks.column("article_id")).to_pylist() if chunks.num_rows else []
    by_article = {c["values"]: c["counts"] for c in counts}
    chat_fp = ctx.chat().fingerprint
    articles = sources.append_column("chat_fingerprint", pa.array([chat_fp] * sources.num_rows, pa.string()))
    articles = articles.append_column("chunk_count", pa.array([by_article.get(a, 0) for a in sources.column("article_id").to_pylist()], pa.int32()))
    tables = {
        "articles": conform("articles", articles),
        "chunks": chunks,
        "chunk_windows": concat("chunk_windows", SCHEMAS["chunk_windows"]),
        "questions": concat("questions", SCHEMAS["questions"]),
        "tree_nodes": concat("tree_nodes", SCHEMAS["tree_nodes"]),
    }
    tables.update(wiki)
    return tables


def _desired_vectors(ctx: BuildContext, kind: str, source: pa.Table, id_col: str) -> pa.Table | None:
    """Vectors of the current rows whose content hash still matches (stale vectors are never published)."""
    parts = [t for b in BUCKETS if (t := ctx.warehouse.read(f"{kind}_vectors", b)) is not None and t.num_rows]
    if not parts:
        return None
    fps = {p.column("fingerprint")[0].as_py() for p in parts}
    fp = ctx.embed_fingerprint()
    parts = [p for p in parts if p.column("fingerprint")[0].as_py() == fp]
    if not parts or fps - {fp}:
        log.info("ignoring vectors with other fingerprints: %s", sorted(fps - {fp}))
    if not parts:
        return None
    vecs = pa.concat_tables(parts)
    wanted = {(i, h) for i, h in zip(source.column(id_col).to_pylist(), source.column("content_hash").to_pylist())}
    mask = [(i, h) in wanted for i, h in zip(vecs.column("id").to_pylist(), vecs.column("content_hash").to_pylist())]
    return vecs.filter(pa.array(mask, pa.bool_()))


def sync_lance(ctx: BuildContext, name: str, table: pa.Table) -> dict[str, Any]:
    """Bring the LanceDB table to exactly `table` in one write; one table per fingerprint and dimension."""
    import lancedb

    fp = table.column("fingerprint")[0].as_py() if table.num_rows else ctx.embed_fingerprint()
    lance_name = f"{name}_{hashlib.sha256(fp.encode()).hexdigest()[:8]}"
    db = lancedb.connect(str(ctx.settings.lance_dir))
    with full_disk_named(ctx.settings.lance_dir / f"{lance_name}.lance"):  # LanceDB's ENOSPC is a RuntimeError
        if lance_name in db.list_tables().tables:
            tbl = db.open_table(lance_name)
            (
                tbl.merge_insert("id")
                .when_matched_update_all(where="target.content_hash != source.content_hash")
                .when_not_matched_insert_all()
                .when_not_matched_by_source_delete()
                .execute(table)
            )
        else:
            tbl = db.create_table(lance_name, table)
    written = tbl.to_arrow()  # read back: the digest covers what readers of this version will see
    return {
        "uri": "lance",
        "table": lance_name,
        "version": tbl.version,
        "rows": written.num_rows,
        "fingerprint": fp,
        "sha256": vector_digest(written),
    }


def publish_snapshot(ctx: BuildContext, *, bucket_versions: dict[str, str], stats: dict[str, Any] | None = None) -> PublishResult:
    """Stage a snapshot and point `CURRENT` at it, with nothing checked in between."""
    started = time.perf_counter()
    return point_snapshot(ctx, stage_snapshot(ctx, bucket_versions=bucket_versions, stats=stats), started=started)


def stage_snapshot(
    ctx: BuildContext,
    *,
    bucket_versions: dict[str, str],
    stats: dict[str, Any] | None = None,
    prefetched: Future[BucketReads] | None = None,
) -> Manifest:
    """Write a complete snapshot folder (tables, vector table versions, manifest) without publishing it, so
    it can be checked before `point_snapshot` makes it `CURRENT`; from the buckets as `prefetched` when given
    (`bucket_prefetch`: a build's, started once its bucket run is past `BUCKET_SOURCES`), which it waits for
    whatever happens."""
    snaps = ctx.settings.snapshots_dir
    remote = ObjectStore(ctx.settings.object_store) if ctx.settings.object_store else None
    pointer = remote.read_pointer() if remote else None  # what the conditional write of CURRENT expects
    parent = pointer.version if pointer else read_current(snaps)
    version = new_version(salt=str(sorted(bucket_versions.items())))
    try:
        with ThreadPoolExecutor(max_workers=PUBLISH_THREADS) as pool:  # leaving it waits for every task, failed or not
            tables, postings = _assemble(ctx, pool, prefetched)
            check_matches_scan(ctx, tables["articles"])
            return _write_folder(ctx, version, parent, tables, postings, pool, bucket_versions, stats)
    except BaseException:
        shutil.rmtree(snaps / version, ignore_errors=True)  # a write failed (a full disk): no partial folder stays
        raise
    finally:
        if prefetched is not None:
            prefetched.exception()  # its reads write the postings caches: never left running past the step


def _read_after_write() -> dict[str, tuple[str, ...] | None]:
    """The columns of each table that the vector sync and the article records read once the table's files
    are written (None: all of them); the tables not named are read by nothing after."""
    kept: dict[str, set[str] | None] = {"articles": None, "chunks": set(SPAN_COLUMNS)}
    for src, id_col in VECTOR_TABLES.values():
        cols = kept.setdefault(src, set())
        if cols is not None:
            cols.update((id_col, "content_hash"))
    return {name: None if cols is None else tuple(sorted(cols)) for name, cols in kept.items()}


def _narrow_written(tables: dict[str, pa.Table]) -> None:
    """Drop, in place, what no later step of the publish reads: the texts, postings and wiki tables (100,000
    chunks: the vector sync's peak went from 4.7 GB to below the 4.1 GB the assembly peaks at)."""
    keep = _read_after_write()
    for name in list(tables):
        if name not in keep:
            del tables[name]
        elif (columns := keep[name]) is not None:
            tables[name] = tables[name].select(list(columns))


def _write_table(folder: Path, name: str, table: pa.Table) -> dict[str, Any]:
    """One table's Parquet file and, for the tables serving maps, its mapped copy; its manifest entry."""
    write_parquet_atomic(table, folder / f"{name}.parquet")
    entry = {"file": f"{name}.parquet", "rows": table.num_rows, **file_entry(folder / f"{name}.parquet")}
    if mapped := write_mapped_table(folder, name, table):
        entry["mapped"] = mapped
    return entry


def _write_folder(
    ctx: BuildContext,
    version: str,
    parent: str | None,
    tables: dict[str, pa.Table],
    postings: Callable[[], tuple[pa.Table, pa.Table]],
    pool: ThreadPoolExecutor,
    bucket_versions: dict[str, str],
    stats: dict[str, Any] | None,
) -> Manifest:
    """Every file of the snapshot folder, the manifest last. The tables are written on `pool`, largest first,
    while the lexical index is merged; once it is (the wiki's postings end last), its Parquet file is written
    on `pool` and its mapped files on this thread side by side. Consumes `tables`: once their files are
    written they are narrowed to what the vector sync and the article records read (`_narrow_written`)."""
    snaps = ctx.settings.snapshots_dir
    folder = snaps / version
    recorded = pool.submit(record_articles, ctx.settings.data_dir, tables["articles"], tables["chunks"])  # before CURRENT can point at them
    largest_first = sorted(tables, key=lambda name: -tables[name].nbytes)  # the last file to start is a short one
    entries = {name: pool.submit(_write_table, folder, name, tables[name]) for name in largest_first}
    index, lengths = postings()  # its Parquet file queued behind the tables' writes, its mapped files on this thread
    lexical_entry = pool.submit(_write_table, folder, "lexical_index", index)
    lexical_files = write_lexical_files(folder, index, lengths)
    manifest_tables = {name: entries[name].result() for name in tables} | {"lexical_index": lexical_entry.result()}
    recorded.result()
    del index, lengths, entries, lexical_entry
    _narrow_written(tables)

    vector_tables: dict[str, dict[str, Any]] = {}
    for name, (src, id_col) in VECTOR_TABLES.items():
        desired = _desired_vectors(ctx, name.removesuffix("_vectors"), tables[src], id_col)
        if desired is not None:
            info = vector_tables[name] = sync_lance(ctx, name, desired)
            rows = read_vector_rows(ctx.settings.lance_dir, info)
            if compact := write_vector_files(folder, name, rows, info, tables[src].column(id_col).to_pylist()):
                info["compact"] = compact
    for name, source in IDENTICAL_SOURCES.items():
        mine, theirs = vector_tables.get(name, {}).get("compact"), vector_tables.get(source, {}).get("compact")
        if mine and theirs and (entry := write_identical_file(folder, name, source, mine, theirs)):
            mine["files"]["identical"] = entry
            mine["identical_to"] = source

    embed_fp = None
    if vector_tables:
        fp = next(iter(vector_tables.values()))["fingerprint"]
        model, dim, ver = fp.rsplit(":", 2)
        embed_fp = {"key": fp, "model": model, "dim": int(dim), "version": ver}
    manifest = Manifest(
        version=version,
        created_at=utc_now_iso(),
        parent_version=parent,
        schema_version=SCHEMA_VERSION,
        chunk_algorithm_version=CHUNK_ALGORITHM_VERSION,
        build_version=BUILD_VERSION,
        chat_fingerprint=ctx.chat().fingerprint,
        embed_fingerprint=embed_fp,
        tables=manifest_tables,
        vector_tables=vector_tables,
        lexical={
            "table": "lexical_index",
            "files": lexical_files,
            "tokenizer": ctx.settings.lexical_tokenizer,
            "tokenizer_revision": get_tokenizer(ctx.settings.lexical_tokenizer).revision,
            "indexes": lexical.INDEXES,
            "fields": dict(zip(bm25.FIELDS, bm25.FIELD_WEIGHTS)),
            "k1": bm25.K1,
            "b": bm25.B,
        },
        stats={"bucket_versions": bucket_versions, **(stats or {})},
    )
    mark_staged(snaps, version)  # complete but not published until CURRENT names it
    write_manifest(snaps, manifest)
    return manifest


def point_snapshot(ctx: BuildContext, manifest: Manifest, *, started: float | None = None) -> PublishResult:
    """Publish a staged snapshot: upload it and move the store's `CURRENT` (only if it still names the
    snapshot's parent, else `PublishConflict`), then the local `CURRENT`, then collect old snapshots."""
    started = time.perf_counter() if started is None else started
    snaps = ctx.settings.snapshots_dir
    folder = snaps / manifest.version
    remote = ObjectStore(ctx.settings.object_store) if ctx.settings.object_store else None
    if remote is not None:
        try:
            pointer = remote.read_pointer()
            if pointer.version != manifest.parent_version:
                raise PublishConflict(f"CURRENT on the store moved to {pointer.version} while {manifest.version} was staged")
            publish_remote(remote, ctx.settings.data_dir, manifest, pointer)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)  # not published: no local CURRENT or retained copy either
            raise
    try:
        point_current(snaps, manifest.version)
    except BaseException:
        if remote is None and read_current(snaps) != manifest.version:
            shutil.rmtree(folder, ignore_errors=True)  # CURRENT could not be written: the folder is never served
        raise
    removed = collect_garbage(snaps, ctx.settings.keep_snapshots)
    if remote is not None:
        removed = sorted(set(removed) | set(collect_remote(remote, ctx.settings.keep_snapshots)))
    forgotten = collect_history(ctx.settings.data_dir, snaps, ctx.settings.history_keep_days, ctx.settings.history_pin_days)
    return PublishResult(manifest, removed, removed_article_versions=forgotten, seconds=time.perf_counter() - started)
