"""Materialization metadata shared by the bucket assets: counts, warnings and a preview of rows."""

from __future__ import annotations

from dataclasses import dataclass
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
    calls_before: UsageMark | None = None,
    data_version: str | None = None,
) -> MaterializeResult:
    """The Dagster result of one bucket step; also tells the CLI's progress display the stage is done."""
    meta = bucket_metadata(result, columns)
    if calls_before is not None:
        now = usage_mark(ctx)
        meta["model_calls"] = now.calls - calls_before.calls
        meta["model_tokens"] = now.tokens - calls_before.tokens
        by_article = {a: n - calls_before.by_article.get(a, 0) for a, n in now.by_article.items()}
        meta["model_calls_by_article"] = MetadataValue.json({a: n for a, n in sorted(by_article.items()) if n})
    if data_version is not None:
        meta["data_version"] = data_version
    ctx.stage_done(result.asset)
    return MaterializeResult(metadata=meta, data_version=DataVersion(data_version) if data_version else None)


@dataclass(frozen=True)
class UsageMark:
    """The run meter's reading before a step, to report what that step spent."""

    calls: int
    tokens: int
    by_article: dict[str, int]


def usage_mark(ctx: BuildContext) -> UsageMark:
    total = ctx.meter.total
    return UsageMark(
        calls=total.calls,
        tokens=total.prompt_tokens + total.completion_tokens,
        by_article={a: rec.calls for a, rec in ctx.meter.by_article.items()},
    )
