"""The Dagster code location: assets, checks, jobs, schedules and sensors (`dagster dev -w workspace.yaml`)."""

from __future__ import annotations

from dagster import Definitions

from petrichor_pipeline.assets import chunks, embeddings, knowledge, snapshot, sources
from petrichor_pipeline.checks import snapshot_checks
from petrichor_pipeline.jobs import bucket_build_job, nightly_full_rebuild, publish_job
from petrichor_pipeline.lint_checks import wiki_lint_checks
from petrichor_pipeline.resources import PetrichorResource
from petrichor_pipeline.sensors import corpus_sensor, publish_after_build

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
PUBLISH_ASSETS = [knowledge.wiki_pages, snapshot.snapshot]


def all_assets() -> list:
    return [*PARTITIONED_ASSETS, *PUBLISH_ASSETS]


def _definitions() -> Definitions:
    return Definitions(
        assets=all_assets(),
        asset_checks=[*snapshot_checks, *wiki_lint_checks],
        jobs=[bucket_build_job, publish_job],
        schedules=[nightly_full_rebuild],
        sensors=[corpus_sensor, publish_after_build],
        resources={"petrichor": PetrichorResource()},
    )


defs = _definitions()
