from dagster import AssetExecutionContext, BackfillPolicy, MaterializeResult, asset

from petrichor_pipeline.assets._metadata import EMBED_POOL, EMBED_STEP, built_on_articles, materialize_buckets
from petrichor_pipeline.assets.sources import BUCKET_OF_CORPUS
from petrichor_pipeline.builder.vectors import vectors_step
from petrichor_pipeline.partitions import buckets
from petrichor_pipeline.resources import PetrichorResource


def _vectors(context: AssetExecutionContext, petrichor: PetrichorResource, kind: str) -> MaterializeResult:
    step = built_on_articles(lambda ctx, bucket: vectors_step(ctx, bucket, kind))
    return materialize_buckets(context, petrichor, step, ("id", "content_hash"))


@asset(
    partitions_def=buckets,
    deps=["chunks", BUCKET_OF_CORPUS],
    group_name="embeddings",
    code_version="1",
    backfill_policy=BackfillPolicy.single_run(),
    op_tags=EMBED_STEP,
    pool=EMBED_POOL,
    description="Passage vectors of the chunks' index texts, cached by content hash and embedding fingerprint; "
    "a failed call leaves vectors pending for the next run.",
)
def chunk_vectors(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return _vectors(context, petrichor, "chunk")


@asset(
    partitions_def=buckets,
    deps=["chunk_windows", "chunk_vectors", BUCKET_OF_CORPUS],
    group_name="embeddings",
    code_version="1",
    backfill_policy=BackfillPolicy.single_run(),
    op_tags=EMBED_STEP,
    pool=EMBED_POOL,
    description="Passage vectors of the chunk windows' index texts, cached like chunk vectors; a window equal "
    "to its chunk reuses the chunk's vector.",
)
def window_vectors(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return _vectors(context, petrichor, "window")


@asset(
    partitions_def=buckets,
    deps=["questions", "chunk_vectors", BUCKET_OF_CORPUS],
    group_name="embeddings",
    code_version="2",
    backfill_policy=BackfillPolicy.single_run(),
    op_tags=EMBED_STEP,
    pool=EMBED_POOL,
    description="Vectors of the generated questions, only when the question routes search them (a configured "
    "chat model wrote them, or PETRICHOR_QUESTION_ROUTES=always), else empty; embedded only once every chunk "
    "vector of the bucket is ready (the spec's two-phase rule).",
)
def question_vectors(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return _vectors(context, petrichor, "question")
