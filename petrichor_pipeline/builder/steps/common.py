"""What the per-article steps share: the bucket's articles, the reuse loop, build keys of model output."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from petrichor_core.contract.schemas import SCHEMAS, SOURCE_SCHEMA
from petrichor_core.text.normalize import sha256_hex
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.incremental import ArticleOutput, ArticleRows, BucketResult, per_article_step
from petrichor_pipeline.knowledge.guide import prepare_guide


def bucket_articles(ctx: BuildContext, bucket: str) -> list[dict[str, Any]]:
    table = ctx.warehouse.read("articles", bucket, SOURCE_SCHEMA)
    return [] if table is None else table.to_pylist()


def live_article_ids(ctx: BuildContext, bucket: str) -> list[str]:
    """The ids of the bucket's current articles (only that column is read)."""
    table = ctx.warehouse.read("articles", bucket, pa.schema([SOURCE_SCHEMA.field("article_id")]))
    return [] if table is None else table.column("article_id").to_pylist()


COSTLIEST_FILES = 10
"""How many of a bucket step's slowest files its result names (`seconds_by_file`)."""


def run_articles(
    ctx: BuildContext,
    asset: str,
    bucket: str,
    schema: pa.Schema,
    build_key: Callable[[dict[str, Any]], str],
    build: Callable[[dict[str, Any]], ArticleOutput],
) -> BucketResult:
    """Run one per-article step over the bucket's current articles with the configured limits.

    Each article's seconds are measured, and the `COSTLIEST_FILES` slowest go into the result's
    `seconds_by_file` (path -> seconds), so a build can say which file cost what.
    """
    seconds: dict[str, float] = {}

    def timed(art: dict[str, Any]) -> ArticleOutput:
        started = time.perf_counter()
        try:
            return build(art)
        finally:
            seconds[art.get("path") or art["article_id"]] = time.perf_counter() - started

    result = per_article_step(
        warehouse=ctx.warehouse,
        asset=asset,
        bucket=bucket,
        schema=schema,
        articles=bucket_articles(ctx, bucket),
        build_key=build_key,
        build=timed,
        concurrency=ctx.settings.limits.article_concurrency,
        force=ctx.full_rebuild,
        timeout_s=ctx.settings.limits.article_timeout_s,
    )
    costliest = sorted(seconds.items(), key=lambda item: (-item[1], item[0]))[:COSTLIEST_FILES]
    if costliest:
        result.extra["seconds_by_file"] = {path: round(s, 3) for path, s in costliest}
    return result


def chunks_by_article(ctx: BuildContext, bucket: str) -> ArticleRows:
    return ArticleRows(ctx.warehouse.read("chunks", bucket, SCHEMAS["chunks"]))


def guides(ctx: BuildContext) -> dict[str, str]:
    """Every knowledge base's compile guide cleaned for prompts, from one scan: a step asks once, not per article."""
    return {kb_id: _prepared(kb.guide_raw) if kb.guide_raw else "" for kb_id, kb in ctx.scan().kbs.items()}


@functools.lru_cache(maxsize=64)
def _prepared(raw: str) -> str:
    return prepare_guide(raw)


def model_key(ctx: BuildContext, art: dict[str, Any], fingerprint: str, kb_guides: dict[str, str]) -> str:
    """Build key of model-derived rows: article and chunk versions, the model fingerprint and the guide."""
    guide = sha256_hex(kb_guides.get(art["kb_id"], ""))[:12]
    return f"{art['article_version']}|{ctx.chunk_key}|{fingerprint}|{art['tenant']}|{art['kb_id']}|guide-{guide}"


class ChunkView:
    """A chunk row seen through the attributes the knowledge layer expects (`knowledge.chunk_view.ChunkLike`)."""

    __slots__ = ("key", "position", "heading", "heading_path", "content", "start", "end")

    def __init__(self, row: dict[str, Any]):
        self.key = row["key"]
        self.position = row["position"]
        self.heading = row["heading"]
        self.heading_path = tuple(row["heading_path"])
        self.content = row["content"]
        self.start = row["start"]
        self.end = row["end"]
