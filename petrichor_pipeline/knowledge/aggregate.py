"""The knowledge base's wiki, merged from every article's contribution (reference §3.7).

Aggregation is a pure function of the current contributions: a page exists while at least one article
supports it, so an article that is removed or no longer mentions an object simply stops contributing,
and orphan pages, their links and their source refs disappear on the next build. Inputs are ordered by
article id, so the same contributions always give the same rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Sequence

import pyarrow as pa

from petrichor_pipeline.contract import chunk_id_of, to_table
from petrichor_pipeline.knowledge.wiki import ArticleKnowledge, PageContribution
from petrichor_pipeline.knowledge.wiki_links import resolve_links
from petrichor_pipeline.text.markdown import has_title_heading

ALIAS_LIMIT = 20

_PARAGRAPH_BREAK = re.compile(r"\n{2,}")


@dataclass(frozen=True)
class WikiTables:
    """Rows of the snapshot tables `wiki_pages`, `wiki_links` and `wiki_sources` (contract.py schemas)."""

    pages: list[dict[str, Any]]
    links: list[dict[str, Any]]
    sources: list[dict[str, Any]]

    def to_arrow(self) -> dict[str, pa.Table]:
        return {
            "wiki_pages": to_table("wiki_pages", self.pages),
            "wiki_links": to_table("wiki_links", self.links),
            "wiki_sources": to_table("wiki_sources", self.sources),
        }


def render_aggregated_page(title: str, bodies: Sequence[str]) -> str:
    """`renderAggregatedKnowledgePage`: one body as is (title ensured); several as `# title` + distinct blocks.

    Blocks are split on blank lines and compared lowercased with whitespace collapsed; each body's own
    H1 line is dropped in the merged form since the page has one title.
    """
    bodies = [b.strip() for b in bodies if b.strip()]
    if len(bodies) == 1:
        return bodies[0] if has_title_heading(bodies[0]) else f"# {title}\n\n{bodies[0]}"
    blocks = [f"# {title}"]
    seen: set[str] = set()
    for body in bodies:
        for block in _PARAGRAPH_BREAK.split(body):
            block = block.strip()
            if not block or ("\n" not in block and has_title_heading(block)):
                continue
            identity = " ".join(block.lower().split())
            if identity not in seen:
                seen.add(identity)
                blocks.append(block)
    return "\n\n".join(blocks)


def aggregate_wiki(contributions: Sequence[ArticleKnowledge]) -> WikiTables:
    """Merge contributions per (kb_id, tenant) into wiki rows; page keys are unique within each pair.

    Per page: title, kind and folder from the first contributing article (by article id) that has
    them, aliases the union of all names and aliases (≤ 20), `article_ids` every contributing article
    (serving shows a page publicly only when all of them are public). Links survive only between pages
    that exist; `[[key|name]]` links in bodies to missing pages become plain text.
    """
    ordered = sorted(contributions, key=lambda k: (k.kb_id, k.tenant, k.article_id))
    tables = WikiTables([], [], [])
    for (kb_id, tenant), group in groupby(ordered, key=lambda k: (k.kb_id, k.tenant)):
        _aggregate_scope(kb_id, tenant, list(group), tables)
    return tables


def _aggregate_scope(kb_id: str, tenant: str, articles: list[ArticleKnowledge], out: WikiTables) -> None:
    ids = [a.article_id for a in articles]
    if len(set(ids)) != len(ids):
        raise ValueError(f"two contributions for one article in {kb_id}/{tenant}")
    supporters: dict[str, list[tuple[ArticleKnowledge, PageContribution]]] = {}
    for article in articles:
        for page in (article.source_page, *article.pages):
            supporters.setdefault(page.page_key, []).append((article, page))
    existing = set(supporters)
    scope = {"kb_id": kb_id, "tenant": tenant}

    for key in sorted(supporters):
        contributions = [page for _, page in supporters[key]]
        first = contributions[0]
        title = first.title
        aliases: list[str] = []
        for name in (a for page in contributions for a in (page.title, *page.aliases)):
            if name != title and name not in aliases and len(aliases) < ALIAS_LIMIT:
                aliases.append(name)
        content = render_aggregated_page(title, [p.content_md for p in contributions])
        out.pages.append(
            {
                **scope,
                "page_key": key,
                "kind": first.kind,
                "title": title,
                "summary": next((p.summary for p in contributions if p.summary), ""),
                "content_md": resolve_links(content, lambda k, own=key: k if k in existing and k != own else None),
                "aliases": aliases,
                "category_path": list(next((p.category_path for p in contributions if p.category_path), ())),
                "article_ids": sorted({a.article_id for a, _ in supporters[key]}),
            }
        )

    links: dict[tuple[str, str, str], str] = {}
    for article in articles:
        for link in article.links:
            ends = (link.from_page_key, link.to_page_key)
            if ends[0] in existing and ends[1] in existing and ends[0] != ends[1]:
                triple = (*ends, link.link_type)
                links[triple] = links.get(triple) or link.description
    out.links.extend(
        {**scope, "from_page_key": f, "to_page_key": t, "link_type": lt, "description": d}
        for (f, t, lt), d in sorted(links.items())
    )

    sources = {
        (ref.page_key, article.article_id, ref.chunk_key): (article.article_version, ref.note)
        for article in articles
        for ref in article.sources
    }
    out.sources.extend(
        {
            **scope,
            "page_key": page_key,
            "article_id": article_id,
            "article_version": version,
            "chunk_id": chunk_id_of(article_id, chunk_key) if chunk_key else None,
            "note": note,
        }
        for (page_key, article_id, chunk_key), (version, note) in sorted(sources.items())
    )
