from dagster import AssetExecutionContext, DataVersion, MaterializeResult, asset

from petrichor_pipeline.assets._metadata import bucket_metadata
from petrichor_pipeline.build.steps import articles_step
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
    result, version = articles_step(petrichor.context(), context.partition_key)
    meta = bucket_metadata(result, ("path", "title", "tenant", "visibility", "article_version"))
    meta["data_version"] = version
    return MaterializeResult(metadata=meta, data_version=DataVersion(version))
