"""The `chunks` step: deterministic heading-aware chunks of each article, with their index texts."""

from __future__ import annotations

from typing import Any

from petrichor_core.contract.schemas import SCHEMAS, chunk_id_of
from petrichor_core.text.chunking import chunk_markdown
from petrichor_core.text.index_text import index_text
from petrichor_core.text.normalize import sha256_hex
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.incremental import ArticleOutput, BucketResult
from petrichor_pipeline.builder.steps.common import run_articles


def chunks_step(ctx: BuildContext, bucket: str) -> BucketResult:
    def build(art: dict[str, Any]) -> ArticleOutput:
        result = chunk_markdown(art["content"], art["title"])
        rows = []
        for c in result.chunks:
            text = index_text(art["title"], c.heading_path, c.content)
            rows.append(
                {
                    "chunk_id": chunk_id_of(art["article_id"], c.key),
                    "article_id": art["article_id"],
                    "kb_id": art["kb_id"],
                    "tenant": art["tenant"],
                    "key": c.key,
                    "position": c.position,
                    "heading": c.heading,
                    "heading_path": list(c.heading_path),
                    "content": c.content,
                    "start": c.start,
                    "end": c.end,
                    "index_text": text,
                    "content_hash": sha256_hex(text),
                }
            )
        # the scan's warnings travel with the chunks: the build summary lists what this step reports
        return ArticleOutput(rows, [*art["warnings"], *result.warnings])

    def key(art: dict[str, Any]) -> str:
        return f"{art['article_version']}|{art['source_sha256']}|{ctx.chunk_key}|{art['tenant']}|{art['kb_id']}"

    return run_articles(ctx, "chunks", bucket, SCHEMAS["chunks"], key, build)
