"""Sensors: observe the corpus so the UI shows what went stale, rebuild only the buckets the instance reports
stale, and publish once bucket runs have settled."""

from __future__ import annotations

from dagster import (
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    RunFailureSensorContext,
    run_failure_sensor,
    run_status_sensor,
    sensor,
)

from petrichor_pipeline.assets.snapshot import discard_unpublished
from petrichor_pipeline.build.steps.articles import current_bucket_versions
from petrichor_pipeline.jobs import asset_keys, bucket_assets, bucket_build_job, publish_job
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


@run_status_sensor(
    name="publish_after_build",
    run_status=DagsterRunStatus.SUCCESS,
    monitored_jobs=[bucket_build_job],
    request_job=publish_job,
    default_status=DefaultSensorStatus.STOPPED,
    description="Publishes a snapshot after bucket runs succeed, once none is queued or running.",
)
def publish_after_build(context):
    in_flight = context.instance.get_runs(
        filters=RunsFilter(
            job_name=bucket_build_job.name,
            statuses=[DagsterRunStatus.QUEUED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED],
        ),
        limit=1,
    )
    if in_flight:
        return SkipReason("bucket runs still in flight")
    return RunRequest(run_key=f"publish-after-{context.dagster_run.run_id}")


@run_failure_sensor(
    name="discard_refused_snapshot",
    monitored_jobs=[publish_job],
    default_status=DefaultSensorStatus.RUNNING,
    description="Removes the snapshot folder a failed publish run staged (a blocking check refused it), so "
    "retention and fallbacks never serve it; CURRENT is untouched. `petrichor build` does the same itself.",
)
def discard_refused_snapshot(context: RunFailureSensorContext):
    removed = discard_unpublished(context.instance, context.dagster_run.run_id, build_context().settings.snapshots_dir)
    return SkipReason(f"removed refused snapshot {removed}" if removed else "nothing staged to remove")
