"""How a bucket asset runs its step over the run's buckets, and the metadata it records: counts, warnings,
a preview of rows and each bucket's build state."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue

from petrichor_pipeline.build.context import BuildContext
from petrichor_pipeline.build.incremental import BucketResult
from petrichor_pipeline.build.steps.articles import built_data_version
from petrichor_pipeline.build.scan_handoff import SCAN_TAG
from petrichor_pipeline.resources import PetrichorResource
from petrichor_pipeline.staleness import BucketState, fresh_in_run, state_metadata


MODEL_STEP = {"petrichor/model": "true"}
"""Op tag of the steps that call models; the build run's executor runs one of them at a time, so the run's
model slots (`model_concurrency`) bound the requests across its processes as well."""
MODEL_POOL = "petrichor_model"
"""Dagster concurrency pool of the same steps, for a limit across runs (backfills side by side, a sensor run
beside a CLI build): unlimited until the instance sets one (`dagster instance concurrency set petrichor_model 1`
or `concurrency: pools: default_limit:` in dagster.yaml; docs/scaling.md)."""


def preview(result: BucketResult, columns: tuple[str, ...], limit: int = 5) -> MetadataValue:
    cols = [c for c in columns if c in result.table.column_names]
    rows = result.table.select(cols).slice(0, limit).to_pylist() if cols else []
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [str(r[c]).replace("\n", " ").replace("|", "\\|")[:80] for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return MetadataValue.md("\n".join(lines))


def _merged(results: Sequence[BucketResult]) -> dict[str, Any]:
    """The counts of a step over the run's buckets: numbers summed, the fingerprint as any bucket saw it."""
    meta: dict[str, Any] = {}
    for r in results:
        for k, v in r.metadata().items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                if v:
                    meta.setdefault(k, v)
            else:
                meta[k] = round(meta.get(k, 0) + v, 3)
    return meta


def bucket_metadata(results: Sequence[BucketResult], columns: tuple[str, ...]) -> dict[str, Any]:
    meta = _merged(results)
    warnings = [w for r in results for w in r.warnings]
    failed = [f for r in results for f in r.failed]
    if warnings:
        meta["warning_list"] = MetadataValue.json(warnings[:50])
    if failed:
        meta["failures"] = MetadataValue.json(failed[:50])
    meta["built_article_ids"] = MetadataValue.json([a for r in results for a in r.built][:200])
    shown = next((r for r in results if r.table.num_rows), results[0] if results else None)
    if shown is not None:
        meta["preview"] = preview(shown, columns)
    return meta


def run_context(context: AssetExecutionContext, petrichor: PetrichorResource) -> BuildContext:
    """The run's build context, working from the build's planning scan when the run names one (`SCAN_TAG`)."""
    ctx = petrichor.context()
    scan_id = context.run.tags.get(SCAN_TAG)
    if scan_id:
        ctx.adopt_scan(scan_id)
    return ctx


def materialize_buckets(
    context: AssetExecutionContext,
    petrichor: PetrichorResource,
    step: Callable[[BuildContext, str], tuple[BucketResult, str]],
    columns: tuple[str, ...],
    *,
    metered: bool = False,
) -> MaterializeResult:
    """Run a bucket step over every bucket of the run (one, or a range), `ctx.bucket_workers` at a time.

    The materialization records each bucket's state (`staleness.BUCKET_STATE`), which is what later builds,
    the sensor and the UI read back to decide staleness; `metered` steps also report their model calls.
    Tells the CLI's progress display each finished bucket.

    A bucket the run's planner found fresh (`staleness.STALE_TAG`: it lies inside the run's range only to
    make the range contiguous) is not touched: its files stay as they are and its materialization records
    the state it was built from, which the planner found equal to the current one.
    """
    ctx = run_context(context, petrichor)
    buckets = list(context.partition_keys)
    fresh = fresh_in_run(context.run.tags, buckets)
    todo = [b for b in buckets if b not in fresh]
    mark = usage_mark(ctx)
    key = ctx.build_key()

    def one(bucket: str) -> tuple[BucketResult, str]:
        result, version = step(ctx, bucket)
        ctx.stage_done(result.asset)
        return result, version

    with ThreadPoolExecutor(max_workers=min(ctx.bucket_workers, len(todo) or 1)) as pool:
        done = list(pool.map(one, todo))
    results = [r for r, _ in done]
    meta = bucket_metadata(results, columns)
    states = {b: BucketState(v, key, int(r.extra.get("pending", 0) or 0)) for b, (r, v) in zip(todo, done)}
    for bucket in sorted(fresh):
        states[bucket] = BucketState(built_data_version(ctx, bucket), key)
    meta.update(state_metadata(states, ctx.warehouse, context.asset_key.to_user_string()))
    if metered:
        now = usage_mark(ctx)
        meta["model_calls"] = now.calls - mark.calls
        meta["model_tokens"] = now.tokens - mark.tokens
        by_article = {a: n - mark.by_article.get(a, 0) for a, n in now.by_article.items()}
        meta["model_calls_by_article"] = MetadataValue.json({a: n for a, n in sorted(by_article.items()) if n})
    return MaterializeResult(metadata=meta)


def built_on_articles(step: Callable[[BuildContext, str], BucketResult]) -> Callable[[BuildContext, str], tuple[BucketResult, str]]:
    """A step downstream of `articles`: its bucket's data version is the one `articles` wrote."""

    def run(ctx: BuildContext, bucket: str) -> tuple[BucketResult, str]:
        return step(ctx, bucket), built_data_version(ctx, bucket)

    return run


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
