"""Sensors: observe the corpus so the UI shows what went stale, rebuild only the buckets the instance reports
stale, publish once bucket runs have settled and every bucket is fresh, and discard a snapshot a failed run
staged."""

from __future__ import annotations

from dagster import (
    AssetKey,
    DagsterEventType,
    DagsterInstance,
    DagsterRun,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunFailureSensorContext,
    RunRequest,
    RunsFilter,
    RunStatusSensorContext,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    run_failure_sensor,
    run_status_sensor,
    sensor,
)

from petrichor_pipeline.assets.snapshot import discard_unpublished
from petrichor_pipeline.builder.steps.articles import current_bucket_versions
from petrichor_pipeline.jobs import PARTITIONED_ASSETS, asset_keys, bucket_assets, bucket_build_job, publish_job
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.staleness import corpus_observations, stale_buckets


@sensor(
    name="corpus_observer",
    minimum_interval_seconds=60,
    default_status=DefaultSensorStatus.RUNNING,
    description="Observes the corpus folder: records a new data version for each bucket whose articles changed "
    "since the last observation, so Dagster's staleness view marks exactly those buckets stale before any build. "
    "Starts no run; on by default.",
)
def corpus_observer(context: SensorEvaluationContext):
    """The mechanism that makes the UI show a corpus change: the daemon records the returned observations of
    the partitioned `corpus` source asset on the instance, and each bucket asset's staleness follows from its
    upstream data version. Observing is cheap (a scan and a hash per bucket) and changes nothing, so it runs by
    default, unlike `corpus_sensor`, which starts builds."""
    observations = corpus_observations(context.instance, current_bucket_versions(build_context()))
    if not observations:
        return SkipReason("no bucket changed since the last observation")
    return SensorResult(asset_events=observations)


@sensor(
    name="corpus_sensor",
    job=bucket_build_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.STOPPED,
    description="Watches the corpus folder: observes each bucket's data version (so the UI shows what went stale) "
    "and requests a bucket_build run for each bucket the instance's materializations say is stale.",
)
def corpus_sensor(context: SensorEvaluationContext):
    ctx = build_context()
    versions = current_bucket_versions(ctx)
    observations = corpus_observations(context.instance, versions)
    steps = bucket_assets(ctx.settings)
    stale = stale_buckets(context.instance, steps, versions, ctx.build_key(), warehouse=ctx.warehouse)
    if not stale and not observations:
        return SkipReason("no bucket changed")
    requests = [RunRequest(run_key=f"{b}:{versions[b]}", partition_key=b, asset_selection=asset_keys(steps)) for b in stale]
    return SensorResult(run_requests=requests, asset_events=observations, skip_reason=None if stale else "no bucket is stale")


BUCKET_KEYS = frozenset(asset_keys(PARTITIONED_ASSETS))
PUBLISHED = AssetKey("published_snapshot")
CLI_RUN = ("petrichor/trigger", "cli")
"""The tag of `petrichor build`'s runs: the build publishes its own."""
IN_FLIGHT = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]


def builds_buckets(run: DagsterRun) -> bool:
    """Whether a run materializes bucket assets: a `bucket_build` run, or an asset run selecting one."""
    return run.job_name == bucket_build_job.name or bool(BUCKET_KEYS & set(run.asset_selection or ()))


def materialized_in(instance: DagsterInstance, run_id: str) -> set[AssetKey]:
    return {
        entry.asset_materialization.asset_key
        for entry in instance.all_logs(run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION)
        if entry.asset_materialization is not None
    }


PUBLISH_SENSOR_INTERVAL_S = 5
"""The daemon's own floor: it evaluates sensors at most every 5 s, and the publish a UI materialization waits
for should not wait longer. The sensor reads only new run events when nothing finished, so a tick is cheap."""


@run_status_sensor(
    name="publish_after_build",
    run_status=DagsterRunStatus.SUCCESS,
    request_job=publish_job,
    default_status=DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=PUBLISH_SENSOR_INTERVAL_S,
    description="After a run that built buckets without publishing (a materialization or backfill from the UI, "
    "a corpus_sensor or nightly_full_rebuild run) succeeds, requests a publish run once no bucket run is in "
    "flight and no bucket is stale; `petrichor build` publishes its own runs. On by default.",
)
def publish_after_build(context: RunStatusSensorContext):
    """What makes a partition materialized from the UI end published, as `petrichor build` does: the snapshot
    is assembled from every bucket, so it waits until the buckets are settled and fresh (a run that built only
    `articles` leaves the bucket's other steps stale: publishing would mix old and new rows)."""
    run = context.dagster_run
    if run.tags.get(CLI_RUN[0]) == CLI_RUN[1]:
        return SkipReason("petrichor build publishes its own runs")
    built = materialized_in(context.instance, run.run_id)
    if not built & BUCKET_KEYS:
        return SkipReason("the run built no bucket")
    if PUBLISHED in built:
        return SkipReason("the run published its snapshot itself")
    if any(builds_buckets(r) for r in context.instance.get_runs(filters=RunsFilter(statuses=IN_FLIGHT))):
        return SkipReason("bucket runs still in flight")
    ctx = build_context()
    stale = stale_buckets(context.instance, bucket_assets(ctx.settings), current_bucket_versions(ctx), ctx.build_key())
    if stale:
        return SkipReason(f"buckets {', '.join(stale)} are stale: materialize them to publish")
    return RunRequest(run_key=f"publish-after-{run.run_id}")


@run_failure_sensor(
    name="discard_refused_snapshot",
    default_status=DefaultSensorStatus.RUNNING,
    description="Removes the snapshot folder a failed run staged (a blocking check refused it: a publish run, or "
    "a run of the whole graph from the UI), so retention and fallbacks never serve it; CURRENT is untouched. "
    "`petrichor build` does the same itself.",
)
def discard_refused_snapshot(context: RunFailureSensorContext):
    removed = discard_unpublished(context.instance, context.dagster_run.run_id, build_context().settings.snapshots_dir)
    return SkipReason(f"removed refused snapshot {removed}" if removed else "nothing staged to remove")
