from dagster import AssetExecutionContext, BackfillPolicy, DataVersionsByPartition, MaterializeResult, asset, observable_source_asset

from petrichor_pipeline.assets._metadata import materialize_buckets
from petrichor_pipeline.build.steps.articles import articles_step, current_bucket_versions
from petrichor_pipeline.partitions import buckets
from petrichor_pipeline.resources import PetrichorResource


@observable_source_asset(
    partitions_def=buckets,
    group_name="sources",
    description="The corpus folder, one partition per hash bucket; a bucket's data version hashes its articles' "
    "ids, versions and source hashes and its files' errors. The `corpus_observer` sensor (on by default) and "
    "`petrichor build` observe it, so the UI marks stale exactly the buckets a corpus change touched, before "
    "any build.",
)
def corpus(context, petrichor: PetrichorResource) -> DataVersionsByPartition:
    return DataVersionsByPartition(current_bucket_versions(petrichor.context()))


@asset(
    partitions_def=buckets,
    deps=[corpus],
    group_name="sources",
    code_version="1",
    backfill_policy=BackfillPolicy.single_run(),
    description="Markdown and PDF articles of the corpus in this hash bucket, normalised, with front matter "
    "and per-file errors. Records the bucket's data version, so downstream partitions go stale only where "
    "the bucket's articles changed.",
)
def articles(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return materialize_buckets(
        context, petrichor, articles_step, ("path", "title", "tenant", "visibility", "article_version")
    )
