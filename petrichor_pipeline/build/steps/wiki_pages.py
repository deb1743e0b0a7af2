"""The `wiki_pages` step: every article's contribution aggregated into the wiki tables, over all buckets."""

from __future__ import annotations

import json

from petrichor_pipeline.build.context import BuildContext
from petrichor_pipeline.build.steps.common import live_article_ids
from petrichor_pipeline.config import BUCKETS
from petrichor_pipeline.contract import CANDIDATE_SCHEMA
from petrichor_pipeline.knowledge.aggregate import aggregate_wiki
from petrichor_pipeline.knowledge.wiki import ArticleKnowledge


def wiki_pages_step(ctx: BuildContext) -> dict[str, int]:
    """Deterministic, so a rerun is identical; contributions of deleted articles are left out."""
    live = {aid for b in BUCKETS for aid in live_article_ids(ctx, b)}
    table = ctx.warehouse.read_all_buckets("wiki_candidates", BUCKETS, CANDIDATE_SCHEMA)
    contributions = [
        ArticleKnowledge.from_dict(json.loads(r["knowledge_json"]))
        for r in table.to_pylist()
        if r["article_id"] in live
    ]
    tables = aggregate_wiki(contributions).to_arrow()
    for name, t in tables.items():
        ctx.warehouse.write(name, t)
    return {name: t.num_rows for name, t in tables.items()}
