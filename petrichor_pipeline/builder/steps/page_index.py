"""The `page_index` step: each article's heading tree with section summaries (PageIndex)."""

from __future__ import annotations

from typing import Any

from petrichor_core.contract.schemas import SCHEMAS
from petrichor_core.models.protocols import CallContext
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.incremental import ArticleOutput, BucketResult
from petrichor_pipeline.builder.steps.common import guides, model_key, run_articles
from petrichor_pipeline.knowledge.page_index import build_page_index


def page_index_step(ctx: BuildContext, bucket: str) -> BucketResult:
    model = ctx.chat()
    kb_guides = guides(ctx)

    def build(art: dict[str, Any]) -> ArticleOutput:
        res = build_page_index(
            art["content"],
            art["title"],
            model,
            CallContext(article_id=art["article_id"], kb_id=art["kb_id"], guide=kb_guides.get(art["kb_id"], "")),
            article_id=art["article_id"],
            kb_id=art["kb_id"],
            tenant=art["tenant"],
        )
        return ArticleOutput(list(res.rows), list(res.warnings))

    return run_articles(ctx, "page_index", bucket, SCHEMAS["tree_nodes"], lambda a: model_key(ctx, a, model.fingerprint, kb_guides), build)
