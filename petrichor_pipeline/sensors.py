"""Sensors: rebuild only the buckets whose files changed, and publish once bucket runs have settled."""

from __future__ import annotations

from dagster import (
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SkipReason,
    run_status_sensor,
    sensor,
)

from petrichor_pipeline.build.steps.articles import current_bucket_versions
from petrichor_pipeline.jobs import bucket_build_job, publish_job
from petrichor_pipeline.resources import build_context


@sensor(
    name="corpus_sensor",
    job=bucket_build_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.STOPPED,
    description="Watches the corpus folder; requests a bucket_build run only for buckets whose articles changed.",
)
def corpus_sensor(context: SensorEvaluationContext):
    ctx = build_context()
    versions = current_bucket_versions(ctx)
    state = ctx.warehouse.read_state().get("buckets", {})
    changed = [b for b, v in versions.items() if state.get(b, {}).get("data_version") != v]
    if not changed:
        return SkipReason("no bucket changed")
    return [RunRequest(run_key=f"{b}:{versions[b]}", partition_key=b) for b in changed]


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
