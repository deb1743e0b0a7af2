from dagster import AssetExecutionContext, MaterializeResult, asset

from petrichor_pipeline.assets._metadata import materialized
from petrichor_pipeline.build.steps.articles import articles_step
from petrichor_pipeline.partitions import buckets
from petrichor_pipeline.resources import PetrichorResource


@asset(
    partitions_def=buckets,
    group_name="sources",
    code_version="1",
    description="Markdown and PDF articles of the corpus in this hash bucket, normalised, with front matter "
    "and per-file errors. The data version hashes the bucket's (article id, article version) pairs, so "
    "downstream partitions go stale only where the bucket's articles changed.",
)
def articles(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    ctx = petrichor.context()
    result, version = articles_step(ctx, context.partition_key)
    return materialized(ctx, result, ("path", "title", "tenant", "visibility", "article_version"), data_version=version)
