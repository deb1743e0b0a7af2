from dagster import AssetExecutionContext, MaterializeResult, asset

from petrichor_pipeline.assets._metadata import materialized
from petrichor_pipeline.build.vectors import vectors_step
from petrichor_pipeline.partitions import buckets
from petrichor_pipeline.resources import PetrichorResource


@asset(
    partitions_def=buckets,
    deps=["chunks"],
    group_name="embeddings",
    code_version="1",
    description="Passage vectors of the chunks' index texts, cached by content hash and embedding fingerprint; "
    "a failed call leaves vectors pending for the next run.",
)
def chunk_vectors(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    ctx = petrichor.context()
    return materialized(ctx, vectors_step(ctx, context.partition_key, "chunk"), ("id", "content_hash"))


@asset(
    partitions_def=buckets,
    deps=["chunk_windows", "chunk_vectors"],
    group_name="embeddings",
    code_version="1",
    description="Passage vectors of the chunk windows' index texts, cached like chunk vectors; a window equal "
    "to its chunk reuses the chunk's vector.",
)
def window_vectors(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    ctx = petrichor.context()
    return materialized(ctx, vectors_step(ctx, context.partition_key, "window"), ("id", "content_hash"))


@asset(
    partitions_def=buckets,
    deps=["questions", "chunk_vectors"],
    group_name="embeddings",
    code_version="1",
    description="Vectors of the generated questions; embedded only once every chunk vector of the bucket is "
    "ready (the spec's two-phase rule).",
)
def question_vectors(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    ctx = petrichor.context()
    return materialized(ctx, vectors_step(ctx, context.partition_key, "question"), ("id", "content_hash"))
