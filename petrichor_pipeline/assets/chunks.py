from dagster import AssetExecutionContext, BackfillPolicy, MaterializeResult, asset

from petrichor_core.versions import CHUNK_ALGORITHM_VERSION, WINDOW_VERSION
from petrichor_pipeline.assets._metadata import built_on_articles, materialize_buckets
from petrichor_pipeline.assets.sources import BUCKET_OF_CORPUS
from petrichor_pipeline.builder.steps.chunks import chunks_step
from petrichor_pipeline.builder.steps.windows import windows_step
from petrichor_pipeline.partitions import buckets
from petrichor_pipeline.resources import PetrichorResource


@asset(
    partitions_def=buckets,
    deps=["articles", BUCKET_OF_CORPUS],
    group_name="chunks",
    code_version=f"chunker-v{CHUNK_ALGORITHM_VERSION}",
    backfill_policy=BackfillPolicy.single_run(),
    description="Deterministic heading-aware chunks (algorithm v2): heading path, content, offsets into the "
    "article, and the index text. Unchanged articles reuse their previous rows.",
)
def chunks(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return materialize_buckets(context, petrichor, built_on_articles(chunks_step), ("chunk_id", "heading", "start", "end"))


@asset(
    partitions_def=buckets,
    deps=["chunks", BUCKET_OF_CORPUS],
    group_name="chunks",
    code_version=f"windows-v{WINDOW_VERSION}",
    backfill_policy=BackfillPolicy.single_run(),
    description="Child windows of every chunk (line- and sentence-aligned, never across a code fence), with "
    "offsets into the article and the index text that is embedded; hits on a window score its chunk.",
)
def chunk_windows(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return materialize_buckets(context, petrichor, built_on_articles(windows_step), ("window_id", "chunk_id", "start", "end"))
