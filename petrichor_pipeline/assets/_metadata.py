"""How a bucket asset runs its step over the run's buckets, and the metadata it records for each bucket:
that bucket's own counts, warnings, a preview of its rows and its build state (a run over a range records
one materialization per bucket, each with its own figures, never the range's totals)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue

from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.incremental import BucketResult
from petrichor_pipeline.builder.issues import write_run_issues
from petrichor_pipeline.builder.scan_handoff import SCAN_TAG
from petrichor_pipeline.builder.steps.articles import built_data_version
from petrichor_pipeline.resources import PetrichorResource
from petrichor_pipeline.sources.identity import bucket_of
from petrichor_pipeline.staleness import BucketState, fresh_in_run, state_metadata

MODEL_TAG = "petrichor/model"
"""Op tag of every step that calls a model; its value says which model (`MODEL_STEP`, `EMBED_STEP`), and the
bucket run's executor limits the steps by it (`jobs.model_step_limits`)."""
MODEL_STEP = {MODEL_TAG: "true"}
"""The steps that call the chat model; the build run's executor runs one of them at a time, so the run's
model slots (`model_concurrency`) bound the requests across its processes as well."""
EMBED_STEP = {MODEL_TAG: "embed"}
"""The embedding steps: with an embeddings endpoint, as many at once as fit the model slots, each sending at
most `embed_concurrency` requests; with the in-process embedder, one model step of either kind at a time."""
MODEL_POOL = "petrichor_model"
"""Dagster concurrency pool of the chat steps, for a limit across runs (backfills side by side, a sensor run
beside a CLI build): unlimited until the instance sets one (`dagster instance concurrency set petrichor_model 1`
or `concurrency: pools: default_limit:` in dagster.yaml; docs/scaling.md)."""
EMBED_POOL = "petrichor_embed"
"""Dagster concurrency pool of the embedding steps, limited across runs the same way (say to
`model_concurrency // embed_concurrency` for an endpoint, 1 for the in-process embedder)."""


UI_ISSUES = 50
"""Warnings and failures a bucket's materialization shows in Dagster's UI; the build summary lists them all."""


def preview(result: BucketResult, columns: tuple[str, ...], limit: int = 5) -> MetadataValue:
    cols = [c for c in columns if c in result.table.column_names]
    rows = result.table.select(cols).slice(0, limit).to_pylist() if cols else []
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [str(r[c]).replace("\n", " ").replace("|", "\\|")[:80] for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return MetadataValue.md("\n".join(lines))


def bucket_metadata(result: BucketResult, columns: tuple[str, ...]) -> dict[str, Any]:
    """One bucket's own figures: the step's counts (numbers as reported, other values only when set), its
    first warnings, failures and built article ids (for the UI; the build reads every record from
    `issues.write_run_issues`), and a preview of its rows."""
    meta: dict[str, Any] = {}
    for k, v in result.metadata().items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            if v:
                meta[k] = v
        else:
            meta[k] = round(v, 3)
    if result.warnings:
        meta["warning_list"] = MetadataValue.json([w.to_json() for w in result.warnings[:UI_ISSUES]])
    if result.failed:
        meta["failures"] = MetadataValue.json([f.to_json() for f in result.failed[:UI_ISSUES]])
    meta["built_article_ids"] = MetadataValue.json(list(result.built)[:200])
    meta["preview"] = preview(result, columns)
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

    Each bucket's materialization carries that bucket's figures alone (`context.add_asset_metadata` scoped
    to its partition) and its state (`staleness.BUCKET_STATE`), which is what later builds, the sensor and
    the UI read back to decide staleness; `metered` steps also report the model calls of its articles.
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
        done = dict(zip(todo, pool.map(one, todo)))
    usage = usage_by_bucket(mark, usage_mark(ctx), todo) if metered else {}
    asset = context.asset_key.to_user_string()
    for bucket in buckets:
        if bucket in done:
            result, version = done[bucket]
            if context.run.tags.get(SCAN_TAG) and (result.warnings or result.failed):  # a `petrichor build` run lists them
                write_run_issues(ctx.warehouse.root, context.run_id, asset, bucket, result.warnings, result.failed)
            meta = bucket_metadata(result, columns)
            state = BucketState(version, key, int(result.extra.get("pending", 0) or 0))
        else:  # fresh: this run did not touch it, so it has no figures of its own
            meta = {"unchanged": True}
            state = BucketState(built_data_version(ctx, bucket), key)
        meta.update(state_metadata({bucket: state}, ctx.warehouse, asset))
        meta.update(usage.get(bucket, {}))
        context.add_asset_metadata(meta, partition_key=bucket)
    return MaterializeResult()


def usage_by_bucket(mark: UsageMark, now: UsageMark, buckets: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each bucket's share of the model calls a step made between `mark` and `now`: the calls of its
    articles. Calls no article of these buckets claims go to the first bucket as `model_calls_unattributed`,
    so the buckets' figures still add up to the step's."""
    out: dict[str, dict[str, Any]] = {b: {"model_calls": 0, "model_tokens": 0, "by_article": {}} for b in buckets}
    calls = tokens = 0
    for article, n in now.by_article.items():
        spent = n - mark.by_article.get(article, 0)
        bucket = out.get(bucket_of(article))
        if spent and bucket is not None:
            used = now.tokens_by_article.get(article, 0) - mark.tokens_by_article.get(article, 0)
            bucket["model_calls"] += spent
            bucket["model_tokens"] += used
            bucket["by_article"][article] = spent
            calls, tokens = calls + spent, tokens + used
    for figures in out.values():
        figures["model_calls_by_article"] = MetadataValue.json(dict(sorted(figures.pop("by_article").items())))
    if buckets and (rest := now.calls - mark.calls - calls):
        out[buckets[0]]["model_calls_unattributed"] = rest
        out[buckets[0]]["model_tokens_unattributed"] = now.tokens - mark.tokens - tokens
    return out


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
    tokens_by_article: dict[str, int]


def usage_mark(ctx: BuildContext) -> UsageMark:
    total = ctx.meter.total
    articles = dict(ctx.meter.by_article)
    return UsageMark(
        calls=total.calls,
        tokens=total.prompt_tokens + total.completion_tokens,
        by_article={a: rec.calls for a, rec in articles.items()},
        tokens_by_article={a: rec.prompt_tokens + rec.completion_tokens for a, rec in articles.items()},
    )
