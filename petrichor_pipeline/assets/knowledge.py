from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from petrichor_pipeline.assets._metadata import materialized, usage_mark
from petrichor_pipeline.build.steps.page_index import page_index_step
from petrichor_pipeline.build.steps.questions import questions_step
from petrichor_pipeline.build.steps.wiki_candidates import wiki_candidates_step
from petrichor_pipeline.build.steps.wiki_pages import wiki_pages_step
from petrichor_pipeline.partitions import buckets
from petrichor_pipeline.resources import PetrichorResource


def _with_calls(petrichor: PetrichorResource, step, partition: str, columns: tuple[str, ...]) -> MaterializeResult:
    ctx = petrichor.context()
    mark = usage_mark(ctx)
    return materialized(ctx, step(ctx, partition), columns, calls_before=mark)


@asset(
    partitions_def=buckets,
    deps=["chunks"],
    group_name="knowledge",
    code_version="1",
    description="Three generated questions per chunk: retrieval aliases that map back to their chunk. "
    "A failed or malformed model reply falls back to template questions with a warning.",
)
def questions(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return _with_calls(petrichor, questions_step, context.partition_key, ("question_id", "question"))


@asset(
    partitions_def=buckets,
    deps=["chunks", "questions"],
    group_name="knowledge",
    code_version="1",
    description="Per-article wiki contribution: document summary, entities and concepts with grounded "
    "relations, generated pages with [[pageKey|name]] links, and the article's source page.",
)
def wiki_candidates(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return _with_calls(petrichor, wiki_candidates_step, context.partition_key, ("article_id", "kb_id"))


@asset(
    partitions_def=buckets,
    deps=["articles"],
    group_name="knowledge",
    code_version="1",
    description="PageIndex: each article's h1–h6 heading tree with section summaries (one model call for "
    "up to 40 sections, local extractive summaries beyond).",
)
def page_index(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    return _with_calls(petrichor, page_index_step, context.partition_key, ("node_key", "title", "summary"))


@asset(
    deps=["wiki_candidates"],
    group_name="wiki",
    code_version="1",
    description="The semantic wiki over all buckets: pages aggregated per knowledge base and tenant, links "
    "and source references. Pages that only a deleted article supported disappear.",
)
def wiki_pages(context: AssetExecutionContext, petrichor: PetrichorResource) -> MaterializeResult:
    counts = wiki_pages_step(petrichor.context())
    return MaterializeResult(metadata={"rows": counts["wiki_pages"], "tables": MetadataValue.json(counts)})
