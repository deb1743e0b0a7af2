"""The asset lists, jobs and the nightly schedule.

`bucket_build` rebuilds hash buckets (one, or a range in one run: the bucket assets run a backfill as a
single run; unchanged articles inside a bucket reuse their rows); `publish` merges all buckets into a
snapshot, runs its asset checks (they are selected with the asset) and points `CURRENT` at it unless a
blocking check failed. The nightly full rebuild requests every bucket with reuse switched off; the publish sensor then
publishes once no bucket run is left in flight.
"""

import os

from dagster import (
    AssetSelection,
    DefaultScheduleStatus,
    RunRequest,
    ScheduleEvaluationContext,
    define_asset_job,
    schedule,
)

from petrichor_pipeline.assets import chunks, embeddings, knowledge, snapshot, sources
from petrichor_pipeline.assets._metadata import MODEL_STEP
from petrichor_pipeline.config import BUCKETS, env_build_workers
from petrichor_pipeline.partitions import buckets

PARTITIONED_ASSETS = [
    sources.articles,
    chunks.chunks,
    chunks.chunk_windows,
    knowledge.questions,
    knowledge.wiki_candidates,
    knowledge.page_index,
    embeddings.chunk_vectors,
    embeddings.window_vectors,
    embeddings.question_vectors,
]
PUBLISH_ASSETS = [knowledge.wiki_pages, snapshot.snapshot, snapshot.published_snapshot]
SOURCE_ASSETS = [sources.corpus]


def all_assets() -> list:
    return [*SOURCE_ASSETS, *PARTITIONED_ASSETS, *PUBLISH_ASSETS]


def parallel_execution(max_concurrent: int | None = None) -> dict:
    """Run config of the multiprocess executor: `max_concurrent` step processes (`Settings.build_workers`;
    default one per core), one model step at a time across them."""
    model_key, model_value = next(iter(MODEL_STEP.items()))
    return {
        "execution": {
            "config": {
                "multiprocess": {
                    "max_concurrent": max_concurrent or max(1, os.cpu_count() or 1),
                    "tag_concurrency_limits": [{"key": model_key, "value": model_value, "limit": 1}],
                }
            }
        }
    }


bucket_build_job = define_asset_job(
    "bucket_build",
    selection=AssetSelection.assets(*PARTITIONED_ASSETS),
    partitions_def=buckets,
    config=parallel_execution(env_build_workers() or None),
    description="Rebuild hash buckets (one, or a range in one run) with one step process per core; unchanged "
    "articles inside a bucket reuse their rows.",
)

publish_job = define_asset_job(
    "publish",
    selection=AssetSelection.assets(*PUBLISH_ASSETS),
    description="Aggregate the wiki over all buckets, stage a new snapshot, run its checks and, unless a blocking "
    "one failed, publish it (CURRENT moves atomically).",
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
