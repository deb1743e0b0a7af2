from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from petrichor_pipeline.assets._metadata import run_context
from petrichor_pipeline.build.publish import publish_snapshot
from petrichor_pipeline.build.steps.articles import current_bucket_versions
from petrichor_pipeline.resources import PetrichorResource


@asset(
    deps=["chunks", "chunk_windows", "questions", "page_index", "wiki_pages", "chunk_vectors", "window_vectors", "question_vectors"],
    group_name="publish",
    code_version="1",
    description="Assembles every bucket into an immutable, versioned snapshot (Parquet + LanceDB table "
    "versions + manifest) and points CURRENT at it with an atomic rename.",
)
def snapshot(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    ctx = run_context(context, petrichor)
    result = publish_snapshot(ctx, bucket_versions=current_bucket_versions(ctx))
    m = result.manifest
    return MaterializeResult(
        metadata={
            "snapshot_version": m.version,
            "parent_version": m.parent_version or "",
            "rows": sum(m.row_counts.values()),
            "tables": MetadataValue.json(m.row_counts),
            "vector_tables": MetadataValue.json(m.vector_tables),
            "removed_snapshots": MetadataValue.json(result.removed_snapshots),
            "seconds": round(result.seconds, 3),
        }
    )
