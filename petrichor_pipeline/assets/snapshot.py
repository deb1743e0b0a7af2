"""Publishing in two steps, so the snapshot's blocking checks sit between them: `snapshot` stages a complete
snapshot folder, its checks (`checks.py`) look at that folder, and `published_snapshot` moves `CURRENT` only
when none of the blocking ones failed (Dagster skips a step downstream of a failed blocking check)."""

import time

from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    DagsterEventType,
    DagsterInstance,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
)

from petrichor_core.contract.current import read_current
from petrichor_core.contract.manifest import read_manifest
from petrichor_pipeline.assets import chunks, embeddings, knowledge, sources
from petrichor_pipeline.assets._metadata import run_context
from petrichor_pipeline.assets.sources import WHOLE_CORPUS
from petrichor_pipeline.builder import bucket_prefetch
from petrichor_pipeline.builder.publish import point_snapshot, stage_snapshot
from petrichor_pipeline.builder.publish_guard import PublishRefused, check_publish
from petrichor_pipeline.builder.scan_handoff import SCAN_TAG
from petrichor_pipeline.builder.steps.articles import current_bucket_versions
from petrichor_pipeline.resources import PetrichorResource

SNAPSHOT = AssetKey("snapshot")
BUILD_MODULES = (sources, chunks, knowledge, embeddings)
"""The modules of the assets a build materializes before it publishes: the snapshot assembles what they write."""


def built_assets() -> list[AssetKey]:
    """Every asset `BUILD_MODULES` define, in their order: the `snapshot` asset's deps, read from the modules
    so that an asset added to one is upstream of the snapshot without a list to keep in step."""
    keys = [key for module in BUILD_MODULES for value in vars(module).values() if isinstance(value, AssetsDefinition) for key in value.keys]
    return list(dict.fromkeys(keys))


def staged_in_run(instance: DagsterInstance, run_id: str) -> str | None:
    """The snapshot version the given run staged (its `snapshot` materialization), if it staged one."""
    for entry in instance.all_logs(run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION):
        mat = entry.asset_materialization
        if mat is not None and mat.asset_key == SNAPSHOT:
            value = mat.metadata.get("snapshot_version")
            return str(getattr(value, "value", value))
    return None


def snapshot_under_check(instance: DagsterInstance, run_id: str, snapshots_dir) -> str | None:
    """What an asset check of `snapshot` looks at: the snapshot its run staged (not yet `CURRENT`: the checks
    decide whether it may become so); in a run of the checks alone, the published `CURRENT`."""
    return staged_in_run(instance, run_id) or read_current(snapshots_dir)


def discard_unpublished(instance: DagsterInstance, run_id: str, snapshots_dir) -> str | None:
    """Remove the snapshot a failed publish run staged (a blocking check refused it, or pointing failed), so
    no fallback or retention ever serves it; `CURRENT` is never touched. Returns the version removed."""
    import shutil

    staged = staged_in_run(instance, run_id)
    if not staged or staged == read_current(snapshots_dir):
        return None
    shutil.rmtree(snapshots_dir / staged, ignore_errors=True)
    return staged


@asset(
    deps=[*built_assets(), WHOLE_CORPUS],
    group_name="publish",
    code_version="1",
    description="Assembles every bucket into an immutable, versioned snapshot folder (Parquet + LanceDB table "
    "versions + manifest), not yet published: its blocking checks run on it before `published_snapshot` "
    "points CURRENT at it. Refuses, before staging, a corpus with no articles or one that drops more than half "
    "of the live snapshot's articles, unless the petrichor resource's allow_empty / allow_shrink says so.",
)
def snapshot(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    ctx = run_context(context, petrichor)
    started = time.perf_counter()
    try:
        check_publish(ctx)
    except PublishRefused as exc:  # the run fails with the guard's one line, nothing staged, CURRENT untouched
        raise Failure(description=str(exc), metadata={"corpus_dir": str(exc.corpus_dir)}, allow_retries=False) from None
    prefetched = bucket_prefetch.take(context.run.tags.get(SCAN_TAG))
    m = stage_snapshot(ctx, bucket_versions=current_bucket_versions(ctx), prefetched=prefetched)
    return MaterializeResult(
        metadata={
            "snapshot_version": m.version,
            "parent_version": m.parent_version or "",
            "rows": sum(m.row_counts.values()),
            "tables": MetadataValue.json(m.row_counts),
            "vector_tables": MetadataValue.json(m.vector_tables),
            "seconds": round(time.perf_counter() - started, 3),
        }
    )


@asset(
    deps=[snapshot, WHOLE_CORPUS],
    group_name="publish",
    code_version="1",
    description="Points CURRENT at the snapshot staged in the same run (an atomic rename; on an object store a "
    "conditional write), once its blocking checks passed; then collects old snapshots.",
)
def published_snapshot(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    ctx = run_context(context, petrichor)
    version = staged_in_run(context.instance, context.run.run_id)
    if version is None:
        raise Failure("no snapshot was staged in this run: materialize `snapshot` with it, so its checks run first")
    result = point_snapshot(ctx, read_manifest(ctx.settings.snapshots_dir, version))
    return MaterializeResult(
        metadata={
            "snapshot_version": version,
            "removed_snapshots": MetadataValue.json(result.removed_snapshots),
            "seconds": round(result.seconds, 3),
        }
    )
