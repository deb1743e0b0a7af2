"""Per-article reuse inside a bucket: the heart of incremental builds.

A step's output for one article is reused when the article's *build key* (its version plus every
fingerprint the step depends on) equals the key recorded beside the previous output. Keys live in a
sidecar JSON written after the Parquet file, so a crash between the two only causes a rebuild.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from petrichor_pipeline.builder.issues import BuildWarning, FileError
from petrichor_pipeline.builder.warehouse import Warehouse


@dataclass
class ArticleOutput:
    rows: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    """Messages about the article; the step attaches its path (`BuildWarning`)."""


@dataclass
class BucketResult:
    asset: str
    bucket: str
    table: pa.Table
    built: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[FileError] = field(default_factory=list)
    warnings: list[BuildWarning] = field(default_factory=list)
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        return {
            "rows": self.table.num_rows,
            "articles_built": len(self.built),
            "articles_skipped": len(self.skipped),
            "articles_failed": len(self.failed),
            "warnings": len(self.warnings),
            "seconds": round(self.seconds, 3),
            **self.extra,
        }


class ArticleRows:
    """A bucket table's rows by article, as Python dicts converted when an article is asked for: a step
    converts the rows of the articles it builds, not the whole bucket's."""

    def __init__(self, table: pa.Table | None, key: str = "article_id"):
        self._table = table
        self._runs = {} if table is None else article_runs(table, key)
        self._indices: dict[str, list[int]] = {}
        if self._runs is None:  # an article's rows apart: index them
            for i, aid in enumerate(table.column(key).to_pylist()):  # type: ignore[union-attr]
                self._indices.setdefault(aid, []).append(i)

    def get(self, article_id: str, default: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        if self._table is not None and self._runs is not None and article_id in self._runs:
            return self._table.slice(*self._runs[article_id]).to_pylist()
        if article_id in self._indices:
            return self._table.take(self._indices[article_id]).to_pylist()  # type: ignore[union-attr]
        return [] if default is None else default


def article_runs(table: pa.Table, key: str = "article_id") -> dict[str, tuple[int, int]] | None:
    """Each article's rows as one (offset, length) run of `table`, or None when an article's rows are split.

    A bucket file keeps each article's rows together (`per_article_step` writes them so), which lets reuse
    slice the previous file instead of filtering and reordering it: a take over nested columns copies every
    row, a slice copies none."""
    ids = table.column(key).to_pylist()
    runs: dict[str, tuple[int, int]] = {}
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or ids[i] != ids[start]:
            if ids[start] in runs:
                return None
            runs[ids[start]] = (start, i - start)
            start = i
    return runs


def _assemble(articles: Sequence[dict[str, Any]], reused: set[str], previous: pa.Table | None, fresh: pa.Table) -> pa.Table:
    """The bucket's table in the articles' order: reused articles' rows from `previous`, the others' from
    `fresh`, each article's rows in their own order; adjacent runs of one source become one slice."""
    sources = [fresh] if previous is None or not reused else [previous, fresh]
    runs = [article_runs(t) for t in sources]
    if any(r is None for r in runs):  # rows of an article apart (a file from elsewhere): filter and sort
        return _assemble_by_sort(articles, reused, previous, fresh)
    pieces: list[tuple[int, int, int]] = []  # (source, offset, length)
    for art in articles:
        aid = art["article_id"]
        source = 0 if len(sources) == 2 and aid in reused else len(sources) - 1
        run = runs[source].get(aid)  # type: ignore[union-attr]
        if run is None:
            continue
        if pieces and pieces[-1][0] == source and pieces[-1][1] + pieces[-1][2] == run[0]:
            pieces[-1] = (source, pieces[-1][1], pieces[-1][2] + run[1])
        else:
            pieces.append((source, *run))
    if not pieces:
        return fresh.schema.empty_table()
    return pa.concat_tables([sources[s].slice(offset, length) for s, offset, length in pieces])


def _assemble_by_sort(articles: Sequence[dict[str, Any]], reused: set[str], previous: pa.Table | None, fresh: pa.Table) -> pa.Table:
    parts = [fresh]
    if previous is not None and previous.num_rows and reused:
        parts.insert(0, previous.filter(pc.is_in(previous.column("article_id"), value_set=pa.array(sorted(reused), pa.string()))))
    table = pa.concat_tables(parts)
    # a stable sort by the articles' order keeps each article's rows in order
    position = pc.index_in(table.column("article_id"), value_set=pa.array([a["article_id"] for a in articles], pa.string()))
    return table.take(pc.sort_indices(pa.table({"p": position}), sort_keys=[("p", "ascending")])).combine_chunks()


def per_article_step(
    *,
    warehouse: Warehouse,
    asset: str,
    bucket: str,
    schema: pa.Schema,
    articles: Sequence[dict[str, Any]],
    build_key: Callable[[dict[str, Any]], str],
    build: Callable[[dict[str, Any]], ArticleOutput],
    concurrency: int,
    force: bool = False,
    timeout_s: float = 15 * 60,
) -> BucketResult:
    """Reuse or rebuild each article's rows, write the bucket file, then the sidecar of keys.

    Reused rows stay Arrow (sliced from the previous file, never converted to Python); the output keeps the
    articles' order, each article's rows in their own order."""
    started = time.perf_counter()
    previous = warehouse.read(asset, bucket, schema)
    # keys vouch for rows of the previous file: without a readable one (removed, corrupt, another schema)
    # every article builds again rather than losing its rows
    prev_keys: dict[str, str] = (warehouse.read_json(asset, bucket) or {}).get("keys", {}) if previous is not None else {}
    result = BucketResult(asset=asset, bucket=bucket, table=schema.empty_table())
    keys: dict[str, str] = {}
    new_rows: dict[str, list[dict[str, Any]]] = {}
    todo: list[dict[str, Any]] = []
    for art in articles:
        aid = art["article_id"]
        key = build_key(art)
        if not force and prev_keys.get(aid) == key:
            keys[aid] = key
            result.skipped.append(aid)
        else:
            todo.append(art)

    for art, out in _run_bounded(todo, build, concurrency, timeout_s):
        aid = art["article_id"]
        if isinstance(out, Exception):
            result.failed.append(FileError(art.get("path", aid), f"{asset}: {type(out).__name__}: {out}"))
            continue
        new_rows[aid] = out.rows
        keys[aid] = build_key(art)
        result.built.append(aid)
        result.warnings.extend(BuildWarning(w, art.get("path", aid)) for w in out.warnings)

    ordered_new = [r for art in articles for r in new_rows.get(art["article_id"], [])]
    fresh = pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in ordered_new], schema=schema)
    result.table = _assemble(articles, set(result.skipped), previous, fresh)
    warehouse.write(asset, result.table, bucket)
    warehouse.write_json(
        asset,
        bucket,
        {
            "keys": keys,
            "warnings": [w.to_json() for w in result.warnings],
            "failed": [f.to_json() for f in result.failed],
        },
    )
    result.seconds = time.perf_counter() - started
    return result


def _run_bounded(
    todo: Sequence[dict[str, Any]], build: Callable[[dict[str, Any]], ArticleOutput], concurrency: int, timeout_s: float
) -> list[tuple[dict[str, Any], ArticleOutput | Exception]]:
    """Build articles on a bounded pool; one that runs past `timeout_s` is reported failed and abandoned.

    Results come back in input order. An article's exception never stops the others.
    """
    started: dict[int, float] = {}

    def run(i: int) -> ArticleOutput:
        started[i] = time.monotonic()
        return build(todo[i])

    outcomes: dict[int, ArticleOutput | Exception] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(todo) or 1)))
    try:
        pending: dict[Future, int] = {pool.submit(run, i): i for i in range(len(todo))}
        while pending:
            done, _ = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                exc = fut.exception()
                outcomes[i] = exc if isinstance(exc, Exception) else fut.result()
            now = time.monotonic()
            for fut, i in list(pending.items()):
                if i in started and now - started[i] > timeout_s:
                    outcomes[i] = TimeoutError(f"article build exceeded {timeout_s:.0f} s")
                    del pending[fut]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return [(todo[i], outcomes[i]) for i in range(len(todo))]
