"""Jobs and the nightly schedule.

`bucket_build` rebuilds one hash bucket (unchanged articles inside it reuse their rows); `publish` merges
all buckets into a snapshot. The nightly full rebuild requests every bucket with reuse switched off; the
publish sensor then publishes once no bucket run is left in flight.
"""

from dagster import (
    AssetSelection,
    DefaultScheduleStatus,
    RunRequest,
    ScheduleEvaluationContext,
    define_asset_job,
    schedule,
)

from petrichor_pipeline.config import BUCKETS
from petrichor_pipeline.partitions import buckets

BUCKET_GROUPS = ("sources", "chunks", "knowledge", "embeddings")

bucket_build_job = define_asset_job(
    "bucket_build",
    selection=AssetSelection.groups(*BUCKET_GROUPS),
    partitions_def=buckets,
    description="Rebuild one hash bucket; unchanged articles inside it reuse their rows.",
)

publish_job = define_asset_job(
    "publish",
    selection=AssetSelection.groups("wiki", "publish"),
    description="Aggregate the wiki over all buckets and publish a new snapshot (CURRENT moves atomically).",
)

FULL_REBUILD_CONFIG = {"resources": {"petrichor": {"config": {"full_rebuild": True}}}}


@schedule(
    name="nightly_full_rebuild",
    job=bucket_build_job,
    cron_schedule="0 3 * * *",
    default_status=DefaultScheduleStatus.STOPPED,
    description="Nightly full rebuild of every bucket, ignoring the skip logic; off by default.",
)
def nightly_full_rebuild(context: ScheduleEvaluationContext):
    stamp = context.scheduled_execution_time.strftime("%Y%m%d") if context.scheduled_execution_time else "manual"
    for bucket in BUCKETS:
        yield RunRequest(
            run_key=f"full-{stamp}-{bucket}",
            partition_key=bucket,
            run_config=FULL_REBUILD_CONFIG,
            tags={"petrichor/full_rebuild": "true"},
        )
