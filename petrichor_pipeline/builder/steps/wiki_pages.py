"""The `wiki_pages` step: every article's contribution aggregated into the wiki tables, over all buckets.

The previous `wiki_pages` table and its memo (`wiki_pages/all.json`) let the aggregation reuse the rows of
pages whose supporters did not change. The memo is removed before the tables are written and written
after them, so a memo never describes a table other than the one beside it. The table replaced is kept as
`REPLACED` (moved, not copied): staging counts an edited page's postings from its earlier text
(`lexical_parts.wiki_units`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from petrichor_core.config import BUCKETS
from petrichor_core.contract.files import write_text_atomic
from petrichor_core.contract.schemas import CANDIDATE_SCHEMA, SCHEMAS
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.contributions import read_contributions
from petrichor_pipeline.builder.steps.common import live_article_ids
from petrichor_pipeline.builder.warehouse import WHOLE
from petrichor_pipeline.knowledge.aggregate import PreviousWiki, aggregate_contributions

MEMO = "all.json"
REPLACED = "replaced"
"""The `wiki_pages` table the last run of this step replaced (`Warehouse.read_arrow` name)."""


@dataclass(frozen=True)
class WikiPagesResult:
    rows: dict[str, int]
    """Table name -> rows written."""
    pages_built: int
    pages_reused: int


def wiki_pages_step(ctx: BuildContext) -> WikiPagesResult:
    """Deterministic, so a rerun is identical; contributions of deleted articles are left out."""
    live = pa.array(sorted({aid for b in BUCKETS for aid in live_article_ids(ctx, b)}), pa.string())
    parts = [t for b in BUCKETS if (t := read_contributions(ctx.warehouse, b)) is not None]
    table = pa.concat_tables(parts) if parts else CANDIDATE_SCHEMA.empty_table()
    alive = pc.is_in(table.column("article_id"), value_set=live)
    if not pc.all(alive).as_py():  # a filter copies every nested row: only when something is left out
        table = table.filter(alive)
    memo_path = ctx.warehouse.root / "wiki_pages" / MEMO
    previous = None if ctx.full_rebuild else _previous(ctx, memo_path)
    result = aggregate_contributions(table, previous=previous)
    memo_path.unlink(missing_ok=True)
    replaced = ctx.warehouse.arrow_path("wiki_pages", REPLACED)
    if (current := ctx.warehouse.arrow_path("wiki_pages", WHOLE)).exists():
        os.replace(current, replaced)
    else:  # no earlier table of this layout: none to keep, and an older kept one would be stale
        replaced.unlink(missing_ok=True)
    for name, t in result.tables.items():
        ctx.warehouse.write(name, t)
    write_text_atomic(memo_path, json.dumps(result.memo, ensure_ascii=False))
    return WikiPagesResult(
        rows={name: t.num_rows for name, t in result.tables.items()},
        pages_built=result.pages_built,
        pages_reused=result.pages_reused,
    )


def replaced_pages(ctx: BuildContext, keys: set[str], columns: list[str]) -> pa.Table | None:
    """The rows of the pages `keys` in the table the step last replaced (`REPLACED`), or None."""
    pages = ctx.warehouse.read_arrow("wiki_pages", REPLACED, columns)
    return None if pages is None else pages.filter(pc.is_in(pages.column("page_key"), value_set=pa.array(sorted(keys), pa.string())))


def _previous(ctx: BuildContext, memo_path) -> PreviousWiki | None:
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    pages = ctx.warehouse.read("wiki_pages", schema=SCHEMAS["wiki_pages"])
    return None if pages is None or not isinstance(memo, dict) else PreviousWiki(pages, memo)
