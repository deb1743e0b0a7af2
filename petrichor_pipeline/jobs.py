"""The asset lists, jobs and the nightly schedule.

`bucket_build` rebuilds hash buckets (one, or a range in one run: the bucket assets run a backfill as a
single run; unchanged articles inside a bucket reuse their rows); `publish` merges all buckets into a
snapshot, runs its asset checks (they are selected with the asset) and points `CURRENT` at it unless a
blocking check failed. `petrichor build` runs exactly these two jobs. Runs Dagster launches for a few buckets
(the UI, the corpus sensor) execute in one process, as `petrichor build` does for a change: a step process
each would import the code location and load the models once per step. The nightly full rebuild asks for the
multiprocess executor and the `publish_after_build` sensor publishes once it succeeded.
"""

import os
from typing import Any

from dagster import (
    AssetSelection,
    DefaultScheduleStatus,
    RunRequest,
    ScheduleEvaluationContext,
    define_asset_job,
    in_process_executor,
    schedule,
)
from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG

from petrichor_core.config import BUCKETS, Settings, load_settings
from petrichor_core.models.providers import UnknownProviderError, embed_provider_entry
from petrichor_pipeline.assets import chunks, embeddings, knowledge, snapshot, sources
from petrichor_pipeline.assets._metadata import EMBED_STEP, MODEL_STEP, MODEL_TAG
from petrichor_pipeline.executors import bucket_executor, celery_execution
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
    beside it. With an in-process embedder (its provider entry says `local`: it uses every core for one
    batch) or embedding off: one model step of either kind at a time (an unknown provider too: the build
    reports it; and no settings, the job's default when the code location loads, which reads no setting but
    the worker count)."""
    try:
        remote = settings is not None and settings.embed_enabled and not embed_provider_entry(settings).local
    except UnknownProviderError:
        remote = False
    if remote and settings is not None:
        return [
            {"key": MODEL_TAG, "value": MODEL_STEP[MODEL_TAG], "limit": 1},
            {"key": MODEL_TAG, "value": EMBED_STEP[MODEL_TAG], "limit": embed_step_limit(settings)},
        ]
    return [{"key": MODEL_TAG, "limit": 1}]


def parallel_execution(max_concurrent: int | None = None, settings: Settings | None = None) -> dict:
    """Run config of the multiprocess executor: `max_concurrent` step processes (`Settings.build_workers`;
    default one per core), the model steps limited by `model_step_limits` (one at a time without settings).
    With `PETRICHOR_CELERY_CONFIG` set, the Celery executor of that file instead (`executors`): its workers
    are the processes, and the model pools on the instance limit the model steps."""
    celery = celery_execution()
    if celery is not None:
        return celery
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


IN_PROCESS: dict[str, Any] = {"execution": {"config": {"in_process": {}}}}
"""Run config of a bucket run in one process: what a partition launched from the UI or requested by the corpus
sensor gets (the job's partitioned config), as `petrichor build` runs a change of fewer than
`runner.PARALLEL_MIN_ARTICLES` articles."""

bucket_build_job = define_asset_job(
    "bucket_build",
    selection=AssetSelection.assets(*PARTITIONED_ASSETS),
    partitions_def=buckets,
    executor_def=bucket_executor,
    config=IN_PROCESS,
    description="Rebuild hash buckets (one, or a range in one run); unchanged articles inside a bucket reuse "
    "their rows. In one process unless the run config asks for the multiprocess executor (the nightly full "
    "rebuild and `petrichor build` with many articles to build: one step process per core) or for Celery workers.",
)

PUBLISH_TAG = ("petrichor/publish", "true")
"""Every job that moves `CURRENT` carries this tag; the instance's run queue starts one such run at a time
(`instance.INSTANCE_YAML`'s `tag_concurrency_limits`), so two publishes Dagster launched never race."""

publish_job = define_asset_job(
    "publish",
    selection=AssetSelection.assets(*PUBLISH_ASSETS),
    tags=dict([PUBLISH_TAG]),
    description="Aggregate the wiki over all buckets, stage a new snapshot, run its checks and, unless a blocking "
    "one failed, publish it (CURRENT moves atomically).",
)

build_and_publish_job = define_asset_job(
    "build_and_publish",
    selection=AssetSelection.assets(*PARTITIONED_ASSETS, *PUBLISH_ASSETS),
    partitions_def=buckets,
    executor_def=in_process_executor,
    tags=dict([PUBLISH_TAG]),
    description="Rebuild the chosen bucket and publish, in one run and one process: what `petrichor build` does "
    "for a change, launched from the UI (Jobs > build_and_publish > Materialize, pick the stale bucket). "
    "Materializing the bucket assets alone publishes too, through `publish_after_build`, at the cost of a "
    "sensor tick and a second run.",
)

FULL_REBUILD_CONFIG = {"resources": {"petrichor": {"config": {"full_rebuild": True}}}}


EVERY_BUCKET = {ASSET_PARTITION_RANGE_START_TAG: BUCKETS[0], ASSET_PARTITION_RANGE_END_TAG: BUCKETS[-1]}
"""Tags of one run over every bucket (the partition range a single-run backfill launches)."""


@schedule(
    name="nightly_full_rebuild",
    job=bucket_build_job,
    cron_schedule="0 3 * * *",
    default_status=DefaultScheduleStatus.STOPPED,
    description="Nightly full rebuild: one run over every bucket, ignoring the skip logic, on the multiprocess "
    "executor; `publish_after_build` (on by default) publishes when it succeeds, so this schedule is the only "
    "switch. Off by default.",
)
def nightly_full_rebuild(context: ScheduleEvaluationContext):
    stamp = context.scheduled_execution_time.strftime("%Y%m%d") if context.scheduled_execution_time else "manual"
    settings = load_settings()
    return RunRequest(
        run_key=f"full-{stamp}",
        asset_selection=asset_keys(bucket_assets(settings)),
        run_config={**FULL_REBUILD_CONFIG, **parallel_execution(settings.build_workers or None, settings)},
        tags={**EVERY_BUCKET, "petrichor/full_rebuild": "true"},
    )
