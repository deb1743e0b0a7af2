from dagster import AssetExecutionContext, MaterializeResult, asset

from petrichor_pipeline.assets._metadata import materialized
from petrichor_pipeline.build.steps.chunks import chunks_step
from petrichor_pipeline.partitions import buckets
from petrichor_pipeline.resources import PetrichorResource
from petrichor_pipeline.text.chunking import ALGORITHM_VERSION


@asset(
    partitions_def=buckets,
    deps=["articles"],
    group_name="chunks",
    code_version=f"chunker-v{ALGORITHM_VERSION}",
    description="Deterministic heading-aware chunks (algorithm v2): heading path, content, offsets into the "
    "article, and the index text. Unchanged articles reuse their previous rows.",
)
def chunks(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    ctx = petrichor.context()
    return materialized(ctx, chunks_step(ctx, context.partition_key), ("chunk_id", "heading", "start", "end"))
