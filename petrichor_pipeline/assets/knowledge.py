import time

from dagster import AssetExecutionContext, BackfillPolicy, MaterializeResult, MetadataValue, asset

from petrichor_pipeline.assets._metadata import (
    MODEL_POOL,
    MODEL_STEP,
    built_on_articles,
    materialize_buckets,
    run_context,
)
from petrichor_pipeline.assets.sources import BUCKET_OF_CORPUS, WHOLE_CORPUS
from petrichor_pipeline.builder.steps.page_index import page_index_step
from petrichor_pipeline.builder.steps.questions import questions_step
from petrichor_pipeline.builder.steps.wiki_candidates import wiki_candidates_step
from petrichor_pipeline.builder.steps.wiki_pages import wiki_pages_step
from petrichor_pipeline.partitions import buckets
from petrichor_pipeline.resources import PetrichorResource


def _with_calls(context: AssetExecutionContext, petrichor: PetrichorResource, step, columns: tuple[str, ...]) -> MaterializeResult:
    return materialize_buckets(context, petrichor, built_on_articles(step), columns, metered=True)


@asset(
    partitions_def=buckets,
    deps=["chunks", BUCKET_OF_CORPUS],
    group_name="knowledge",
    code_version="1",
    backfill_policy=BackfillPolicy.single_run(),
    op_tags=MODEL_STEP,
    pool=MODEL_POOL,
    description="Three generated questions per chunk: retrieval aliases that map back to their chunk. "
    "A failed or malformed model reply falls back to template questions with a warning.",
)
def questions(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return _with_calls(context, petrichor, questions_step, ("question_id", "question"))


@asset(
    partitions_def=buckets,
    deps=["chunks", "questions", BUCKET_OF_CORPUS],
    group_name="knowledge",
    code_version="1",
    backfill_policy=BackfillPolicy.single_run(),
    op_tags=MODEL_STEP,
    pool=MODEL_POOL,
    description="Per-article wiki contribution: document summary, entities and concepts with grounded "
    "relations, generated pages with [[pageKey|name]] links, and the article's source page.",
)
def wiki_candidates(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return _with_calls(context, petrichor, wiki_candidates_step, ("article_id", "kb_id"))


@asset(
    partitions_def=buckets,
    deps=["articles", BUCKET_OF_CORPUS],
    group_name="knowledge",
    code_version="1",
    backfill_policy=BackfillPolicy.single_run(),
    op_tags=MODEL_STEP,
    pool=MODEL_POOL,
    description="PageIndex: each article's h1–h6 heading tree with section summaries (one model call for "
    "up to 40 sections, local extractive summaries beyond).",
)
def page_index(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return _with_calls(context, petrichor, page_index_step, ("node_key", "title", "summary"))


@asset(
    deps=["wiki_candidates", WHOLE_CORPUS],
    group_name="wiki",
    code_version="1",
    description="The semantic wiki over all buckets: pages aggregated per knowledge base and tenant, links "
    "and source references. Pages that only a deleted article supported disappear.",
)
def wiki_pages(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    started = time.perf_counter()
    result = wiki_pages_step(run_context(context, petrichor))
    seconds = round(time.perf_counter() - started, 3)
    return MaterializeResult(
        metadata={
            "rows": result.rows["wiki_pages"],
            "tables": MetadataValue.json(result.rows),
            "pages_built": result.pages_built,
            "pages_reused": result.pages_reused,
            "seconds": seconds,
        }
    )
