"""Materialization metadata shared by the bucket assets: counts, warnings and a preview of rows."""

from __future__ import annotations

from typing import Any

from dagster import MetadataValue

from petrichor_pipeline.build.incremental import BucketResult


def preview(result: BucketResult, columns: tuple[str, ...], limit: int = 5) -> MetadataValue:
    cols = [c for c in columns if c in result.table.column_names]
    rows = result.table.select(cols).slice(0, limit).to_pylist() if cols else []
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [str(r[c]).replace("\n", " ").replace("|", "\\|")[:80] for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return MetadataValue.md("\n".join(lines))


def bucket_metadata(result: BucketResult, columns: tuple[str, ...], model_calls: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = dict(result.metadata())
    if model_calls is not None:
        meta["model_calls"] = model_calls
    if result.warnings:
        meta["warning_list"] = MetadataValue.json(result.warnings[:50])
    if result.failed:
        meta["failures"] = MetadataValue.json(result.failed[:50])
    meta["built_article_ids"] = MetadataValue.json(result.built[:200])
    meta["preview"] = preview(result, columns)
    return meta
