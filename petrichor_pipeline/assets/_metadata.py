"""Materialization metadata shared by the bucket assets: counts, warnings and a preview of rows."""

from __future__ import annotations

from typing import Any

from dagster import DataVersion, MaterializeResult, MetadataValue

from petrichor_pipeline.build.context import BuildContext
from petrichor_pipeline.build.incremental import BucketResult


def preview(result: BucketResult, columns: tuple[str, ...], limit: int = 5) -> MetadataValue:
    cols = [c for c in columns if c in result.table.column_names]
    rows = result.table.select(cols).slice(0, limit).to_pylist() if cols else []
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [str(r[c]).replace("\n", " ").replace("|", "\\|")[:80] for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return MetadataValue.md("\n".join(lines))


def bucket_metadata(result: BucketResult, columns: tuple[str, ...]) -> dict[str, Any]:
    meta: dict[str, Any] = dict(result.metadata())
    if result.warnings:
        meta["warning_list"] = MetadataValue.json(result.warnings[:50])
    if result.failed:
        meta["failures"] = MetadataValue.json(result.failed[:50])
    meta["built_article_ids"] = MetadataValue.json(result.built[:200])
    meta["preview"] = preview(result, columns)
    return meta


def materialized(
    ctx: BuildContext,
    result: BucketResult,
    columns: tuple[str, ...],
    *,
    calls_before: tuple[int, int] | None = None,
    data_version: str | None = None,
) -> MaterializeResult:
    """The Dagster result of one bucket step; also tells the CLI's progress display the stage is done."""
    meta = bucket_metadata(result, columns)
    if calls_before is not None:
        total = ctx.meter.total
        meta["model_calls"] = total.calls - calls_before[0]
        meta["model_tokens"] = total.prompt_tokens + total.completion_tokens - calls_before[1]
    if data_version is not None:
        meta["data_version"] = data_version
    ctx.stage_done(result.asset)
    return MaterializeResult(metadata=meta, data_version=DataVersion(data_version) if data_version else None)


def usage_mark(ctx: BuildContext) -> tuple[int, int]:
    """Model calls and tokens so far, to report what one step spent."""
    total = ctx.meter.total
    return total.calls, total.prompt_tokens + total.completion_tokens
