"""The `articles` step: the corpus scan split into hash buckets, each bucket's rows and data version."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from petrichor_core.config import BUCKETS
from petrichor_core.contract.schemas import SOURCE_SCHEMA
from petrichor_core.versions import BUILD_VERSION, CHUNK_ALGORITHM_VERSION
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.incremental import BucketResult
from petrichor_pipeline.builder.issues import BuildWarning, FileError
from petrichor_pipeline.sources.identity import article_id_of, bucket_of

BucketRows = tuple[list[dict[str, Any]], list[FileError]]
"""A bucket's article rows and its files' errors."""


def bucket_data_version(articles: list[dict[str, Any]], errors: Sequence[FileError]) -> str:
    """A bucket's data version: its articles' ids, versions and source hashes and its files' errors, order-free."""
    h = hashlib.sha256()
    for aid, ver, src in sorted((a["article_id"], a["article_version"], a["source_sha256"]) for a in articles):
        h.update(f"{aid}:{ver}:{src}\n".encode())
    for path, reason in sorted((e.path, e.reason) for e in errors):
        h.update(f"!{path}:{reason}\n".encode())
    return h.hexdigest()[:16]


def scan_buckets(ctx: BuildContext) -> dict[str, BucketRows]:
    """The corpus split into buckets: (article rows, file errors) per bucket key."""
    scan = ctx.scan()
    out: dict[str, BucketRows] = {b: ([], []) for b in BUCKETS}
    for art in scan.articles:
        row = {
            "article_id": art.article_id,
            "kb_id": art.kb_id,
            "path": art.path,
            "title": art.title,
            "tenant": art.tenant,
            "visibility": art.visibility,
            "share_expires_at": art.share_expires_at,
            "password_protected": art.password_protected,
            "article_version": art.article_version,
            "source_sha256": art.source_sha256,
            "content": art.content,
            "chunk_algorithm_version": CHUNK_ALGORITHM_VERSION,
            "build_version": BUILD_VERSION,
            "bucket": art.bucket,
            "warnings": list(art.warnings),
        }
        out[art.bucket][0].append(row)
    for err in scan.errors:
        out[bucket_of(article_id_of(err.path))][1].append(FileError(err.path, err.reason))
    return out


def current_bucket_versions(ctx: BuildContext) -> dict[str, str]:
    return {b: bucket_data_version(rows, errs) for b, (rows, errs) in scan_buckets(ctx).items()}


def built_data_version(ctx: BuildContext, bucket: str) -> str:
    """The data version the bucket's `articles` output was written from (what every later step builds on)."""
    recorded = ctx.warehouse.read_json("articles", bucket) or {}
    return str(recorded.get("data_version") or bucket_data_version([], []))


def articles_step(ctx: BuildContext, bucket: str) -> tuple[BucketResult, str]:
    started = time.perf_counter()
    rows, errors = scan_buckets(ctx)[bucket]
    table = pa.Table.from_pylist(rows, schema=SOURCE_SCHEMA)
    ctx.warehouse.write("articles", table, bucket)
    version = bucket_data_version(rows, errors)
    ctx.warehouse.write_json("articles", bucket, {"data_version": version, "errors": [e.to_json() for e in errors]})
    result = BucketResult("articles", bucket, table, built=[r["article_id"] for r in rows], failed=list(errors))
    result.warnings = [BuildWarning(w, r["path"]) for r in rows for w in r["warnings"]]
    result.seconds = time.perf_counter() - started
    return result, version
