"""Per-article reuse inside a bucket: the heart of incremental builds.

A step's output for one article is reused when the article's *build key* (its version plus every
fingerprint the step depends on) equals the key recorded beside the previous output. Keys live in a
sidecar JSON written after the Parquet file, so a crash between the two only causes a rebuild.
"""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from petrichor_pipeline.build.issues import BuildWarning, FileError
from petrichor_pipeline.build.warehouse import Warehouse


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


def group_rows(table: pa.Table | None, key: str = "article_id") -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    if table is None:
        return out
    for row in table.to_pylist():
        out.setdefault(row[key], []).append(row)
    return out


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

    Reused rows stay Arrow (taken from the previous file, never converted to Python); the output keeps the
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

    parts = []
    if previous is not None and previous.num_rows and result.skipped:
        parts.append(previous.filter(pc.is_in(previous.column("article_id"), value_set=pa.array(result.skipped, pa.string()))))
    ordered_new = [r for art in articles for r in new_rows.get(art["article_id"], [])]
    if ordered_new:
        parts.append(pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in ordered_new], schema=schema))
    table = pa.concat_tables(parts) if parts else schema.empty_table()
    if len(parts) > 1:  # back into the articles' order; a stable sort keeps each article's rows in order
        position = pc.index_in(table.column("article_id"), value_set=pa.array([a["article_id"] for a in articles], pa.string()))
        table = table.take(pc.sort_indices(pa.table({"p": position}), sort_keys=[("p", "ascending")]))
    result.table = table.combine_chunks()
    warehouse.write(asset, result.table, bucket)
    warehouse.write_json(asset, bucket, {
        "keys": keys, "warnings": [w.to_json() for w in result.warnings], "failed": [f.to_json() for f in result.failed],
    })
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
