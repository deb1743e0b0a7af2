"""The Dagster code location: assets, checks, jobs, schedules and sensors (`dagster dev -w workspace.yaml`)."""

from __future__ import annotations

from dagster import Definitions

from petrichor_pipeline.jobs import (
    PARTITIONED_ASSETS,
    PUBLISH_ASSETS,
    all_assets,
    bucket_build_job,
    nightly_full_rebuild,
    publish_job,
)
from petrichor_pipeline.memory import use_build_gc
from petrichor_pipeline.resources import PetrichorResource
from petrichor_pipeline.sensors import corpus_observer, corpus_sensor, discard_refused_snapshot, publish_after_build
from petrichor_pipeline.snapshot_checks import ASSET_CHECKS

use_build_gc()


def _definitions() -> Definitions:
    return Definitions(
        assets=all_assets(),
        asset_checks=ASSET_CHECKS,
        jobs=[bucket_build_job, publish_job],
        schedules=[nightly_full_rebuild],
        sensors=[corpus_observer, corpus_sensor, publish_after_build, discard_refused_snapshot],
        resources={"petrichor": PetrichorResource()},
    )


defs = _definitions()

__all__ = ["ASSET_CHECKS", "PARTITIONED_ASSETS", "PUBLISH_ASSETS", "all_assets", "defs", "bucket_build_job_def"]


def bucket_build_job_def():
    """The resolved `bucket_build` job, reconstructable in the executor's step processes."""
    return defs.resolve_job_def(bucket_build_job.name)
