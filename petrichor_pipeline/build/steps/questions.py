"""The `questions` step: generated questions per chunk, retrieval aliases that map back to it."""

from __future__ import annotations

from typing import Any

from petrichor_pipeline.build.context import BuildContext
from petrichor_pipeline.build.incremental import ArticleOutput, BucketResult
from petrichor_pipeline.build.steps.common import ChunkView, chunks_by_article, guides, model_key, run_articles
from petrichor_pipeline.contract.schemas import SCHEMAS
from petrichor_pipeline.knowledge.questions import generate_questions
from petrichor_pipeline.models.protocols import CallContext
from petrichor_pipeline.text.index_text import index_text
from petrichor_pipeline.text.normalize import sha256_hex


def questions_step(ctx: BuildContext, bucket: str) -> BucketResult:
    chunks = chunks_by_article(ctx, bucket)
    model = ctx.chat()
    kb_guides = guides(ctx)

    def build(art: dict[str, Any]) -> ArticleOutput:
        rows_in = chunks.get(art["article_id"], [])
        if not rows_in:
            return ArticleOutput([])
        items = [ChunkView(r) for r in rows_in]
        call = CallContext(article_id=art["article_id"], kb_id=art["kb_id"], guide=kb_guides.get(art["kb_id"], ""))
        res = generate_questions(items, model, call, concurrency=ctx.settings.limits.question_batch_concurrency)
        rows = []
        for r in rows_in:
            for i, q in enumerate(res.questions.get(r["key"], ())):
                text = index_text(art["title"], r["heading_path"], q)
                rows.append(
                    {
                        "question_id": f"{r['chunk_id']}:q{i}",
                        "chunk_id": r["chunk_id"],
                        "article_id": art["article_id"],
                        "kb_id": art["kb_id"],
                        "tenant": art["tenant"],
                        "position": i,
                        "question": q,
                        "index_text": text,
                        "content_hash": sha256_hex(text),
                    }
                )
        return ArticleOutput(rows, list(res.warnings))

    return run_articles(ctx, "questions", bucket, SCHEMAS["questions"], lambda a: model_key(ctx, a, model.fingerprint, kb_guides), build)
