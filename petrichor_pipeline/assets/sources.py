from dagster import (
    AllPartitionMapping,
    AssetDep,
    AssetExecutionContext,
    BackfillPolicy,
    DataVersionsByPartition,
    Failure,
    MaterializeResult,
    asset,
    observable_source_asset,
)

from petrichor_pipeline.assets._metadata import materialize_buckets, run_context
from petrichor_pipeline.builder.publish_guard import PublishRefused, check_corpus
from petrichor_pipeline.builder.steps.articles import articles_step, current_bucket_versions
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


BUCKET_OF_CORPUS = AssetDep(corpus)
"""Every bucket asset's edge to the corpus bucket it is built from. Dagster's staleness view looks one edge
deep (an asset is stale when an input has a newer data version than the one its materialization recorded),
so without it only `articles` turned stale when the observer recorded an edit; with it every step of the
edited bucket does, before any build."""
WHOLE_CORPUS = AssetDep(corpus, partition_mapping=AllPartitionMapping())
"""The same edge for the unpartitioned assets built from every bucket (`wiki_pages`, `snapshot`,
`published_snapshot`): stale when any bucket of the corpus changed."""


@asset(
    partitions_def=buckets,
    deps=[BUCKET_OF_CORPUS],
    group_name="sources",
    code_version="1",
    backfill_policy=BackfillPolicy.single_run(),
    description="Markdown and PDF articles of the corpus in this hash bucket, normalised, with front matter "
    "and per-file errors. Records the bucket's data version, so downstream partitions go stale only where "
    "the bucket's articles changed. A corpus folder that is missing or holds no articles fails the run before "
    "any bucket is rewritten, unless the petrichor resource's allow_empty says so.",
)
def articles(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    try:
        check_corpus(run_context(context, petrichor))
    except PublishRefused as exc:  # a mistyped corpus path: the run fails before any bucket is rewritten empty
        raise Failure(description=str(exc), metadata={"corpus_dir": str(exc.corpus_dir)}, allow_retries=False) from None
    return materialize_buckets(context, petrichor, articles_step, ("path", "title", "tenant", "visibility", "article_version"))
