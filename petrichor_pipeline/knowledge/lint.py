"""Wiki lint: structural faults of a published wiki, as plain functions over snapshot rows.

Each function returns the offending keys, sorted, so an asset check can show them and a test can seed one.
Pages are keyed `kb_id/page_key` (page keys are unique per knowledge base and tenant).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from petrichor_pipeline.knowledge.wiki_links import linked_keys

ROOT_KINDS = frozenset({"source", "index", "log"})
"""Pages that stand for an article or the whole wiki: nothing has to link to them."""

Row = Mapping[str, Any]


def _key(kb_id: str, page_key: str) -> str:
    return f"{kb_id}/{page_key}"


def _page_ids(pages: Iterable[Row]) -> set[tuple[str, str, str]]:
    return {(p["kb_id"], p["tenant"], p["page_key"]) for p in pages}


def broken_links(pages: list[Row], links: list[Row]) -> list[str]:
    """`kb/from -> to` for every `[[pageKey|name]]` in a body and every link row whose target page is missing."""
    known = _page_ids(pages)
    bad = {
        f"{_key(p['kb_id'], p['page_key'])} -> {target}"
        for p in pages
        for target in linked_keys(p["content_md"] or "")
        if (p["kb_id"], p["tenant"], target) not in known
    }
    bad |= {
        f"{_key(l['kb_id'], l['from_page_key'])} -> {l['to_page_key']}"
        for l in links
        if (l["kb_id"], l["tenant"], l["to_page_key"]) not in known
    }
    return sorted(bad)


def orphan_pages(pages: list[Row], links: list[Row]) -> list[str]:
    """Entity and concept pages no other page links to, by a link row or a `[[...]]` in its body."""
    linked: set[tuple[str, str, str]] = set()
    for l in links:
        if l["from_page_key"] != l["to_page_key"]:
            linked.add((l["kb_id"], l["tenant"], l["to_page_key"]))
    for p in pages:
        linked.update((p["kb_id"], p["tenant"], k) for k in linked_keys(p["content_md"] or "") if k != p["page_key"])
    return sorted(
        _key(p["kb_id"], p["page_key"])
        for p in pages
        if p["kind"] not in ROOT_KINDS and (p["kb_id"], p["tenant"], p["page_key"]) not in linked
    )


def pages_with_outdated_sources(pages: list[Row], sources: list[Row], articles: list[Row]) -> dict[str, list[str]]:
    """`{"deleted": [...], "stale": [...]}`: pages built from an article that is gone, or from an older
    version of one that changed since."""
    version = {a["article_id"]: a["article_version"] for a in articles}
    deleted: set[str] = set()
    stale: set[str] = set()
    for s in sources:
        key = _key(s["kb_id"], s["page_key"])
        if s["article_id"] not in version:
            deleted.add(key)
        elif s["article_version"] != version[s["article_id"]]:
            stale.add(key)
    for p in pages:
        if any(a not in version for a in p["article_ids"] or ()):
            deleted.add(_key(p["kb_id"], p["page_key"]))
    return {"deleted": sorted(deleted), "stale": sorted(stale - deleted)}


def outdated_articles(articles: list[Row], *, chunk_algorithm_version: int, build_version: int) -> list[str]:
    """Articles chunked by another chunk algorithm or built by another build version than the current ones."""
    return sorted(
        a["article_id"]
        for a in articles
        if a["chunk_algorithm_version"] != chunk_algorithm_version or a["build_version"] != build_version
    )
