"""The Dagster code location: assets, checks, jobs, schedules and sensors (`dagster dev -w workspace.yaml`)."""

from __future__ import annotations

from dagster import Definitions, in_process_executor

from petrichor_core.memory import use_build_gc
from petrichor_pipeline.jobs import (
    PARTITIONED_ASSETS,
    PUBLISH_ASSETS,
    all_assets,
    bucket_build_job,
    build_and_publish_job,
    nightly_full_rebuild,
    publish_job,
)
from petrichor_pipeline.resources import PetrichorResource
from petrichor_pipeline.sensors import corpus_observer, corpus_sensor, discard_refused_snapshot, publish_after_build
from petrichor_pipeline.snapshot_checks import ASSET_CHECKS

use_build_gc()


def definitions(petrichor: PetrichorResource) -> Definitions:
    """The code location with the given resource: `defs` has the default one (settings read when a run
    starts); `petrichor build` runs the same jobs in its own process from one with its own (its settings and
    progress listener), so its runs are `bucket_build` and `publish` runs like any other.

    `in_process_executor` is the executor of every job that names none: the asset graph's materializations
    and backfills (Dagster's `__ASSET_JOB`) and `publish` run their steps in the run's own process, with one
    code location import, one model load and one corpus scan, as `petrichor build` does. A process per step
    cost about ten seconds each on two cores: 3 minutes for a one-article change that the CLI built in 20 s."""
    return Definitions(
        assets=all_assets(),
        asset_checks=ASSET_CHECKS,
        jobs=[bucket_build_job, publish_job, build_and_publish_job],
        schedules=[nightly_full_rebuild],
        sensors=[corpus_observer, corpus_sensor, publish_after_build, discard_refused_snapshot],
        resources={"petrichor": petrichor},
        executor=in_process_executor,
    )


defs = definitions(PetrichorResource())

__all__ = ["ASSET_CHECKS", "PARTITIONED_ASSETS", "PUBLISH_ASSETS", "all_assets", "bucket_build_job_def", "definitions", "defs"]


def bucket_build_job_def():
    """The resolved `bucket_build` job, reconstructable in the executor's step processes."""
    return defs.resolve_job_def(bucket_build_job.name)
