"""The `wiki_candidates` step: each article's wiki contribution, aggregated later by `wiki_pages`."""

from __future__ import annotations

from typing import Any

from petrichor_core.contract.schemas import CANDIDATE_SCHEMA, SCHEMAS
from petrichor_core.models.protocols import CallContext
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.contributions import upgrade_legacy
from petrichor_pipeline.builder.incremental import ArticleOutput, ArticleRows, BucketResult
from petrichor_pipeline.builder.steps.common import ChunkView, chunks_by_article, guides, model_key, run_articles
from petrichor_pipeline.knowledge.wiki import ArticleInput, build_article_knowledge


def wiki_candidates_step(ctx: BuildContext, bucket: str) -> BucketResult:
    upgrade_legacy(ctx.warehouse, bucket)
    chunks = chunks_by_article(ctx, bucket)
    questions = ctx.warehouse.read("questions", bucket, SCHEMAS["questions"])
    questions_of = ArticleRows(None if questions is None else questions.select(["article_id", "chunk_id", "question"]))
    model = ctx.chat()
    kb_guides = guides(ctx)
    scan = ctx.scan()

    def build(art: dict[str, Any]) -> ArticleOutput:
        rows_in = chunks.get(art["article_id"], [])
        by_chunk: dict[str, list[str]] = {}
        for q in questions_of.get(art["article_id"]):
            by_chunk.setdefault(q["chunk_id"], []).append(q["question"])
        kb = scan.kbs.get(art["kb_id"])
        knowledge = build_article_knowledge(
            ArticleInput(
                article_id=art["article_id"],
                kb_id=art["kb_id"],
                tenant=art["tenant"],
                title=art["title"],
                content=art["content"],
                article_version=art["article_version"],
                kb_name=kb.name if kb else art["kb_id"],
            ),
            [ChunkView(r) for r in rows_in],
            model,
            CallContext(article_id=art["article_id"], kb_id=art["kb_id"], guide=kb_guides.get(art["kb_id"], "")),
            questions={r["key"]: by_chunk.get(r["chunk_id"], []) for r in rows_in},
            concurrency=ctx.settings.limits.page_batch_concurrency,
        )
        return ArticleOutput([knowledge.to_row()], list(knowledge.warnings))

    return run_articles(ctx, "wiki_candidates", bucket, CANDIDATE_SCHEMA, lambda a: model_key(ctx, a, model.fingerprint, kb_guides), build)
