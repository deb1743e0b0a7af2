"""Wiki lint: structural faults of a published wiki, as plain functions over snapshot rows.

Each function returns the offending keys, sorted, so an asset check can show them and a test can seed one.
Pages are keyed `kb_id/page_key` (page keys are unique per knowledge base and tenant).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from petrichor_pipeline.knowledge.wiki_links import linked_keys

ROOT_KINDS = frozenset({"source", "index", "log"})
"""Pages that stand for an article or the whole wiki: nothing has to link to them."""

Rows = Sequence[Mapping[str, Any]] | pa.Table
"""A snapshot table's rows: mappings, or the Arrow table itself, read column by column (a wiki of 10,000
articles has half a million link rows, and a dict per row cost the checks seconds)."""


def _fields(rows: Rows, *names: str) -> Iterator[tuple[Any, ...]]:
    """The `names` fields of each row, in row order."""
    if isinstance(rows, pa.Table):
        return zip(*(rows.column(name).to_pylist() for name in names))
    return (tuple(row[name] for name in names) for row in rows)


def _key(kb_id: str, page_key: str) -> str:
    return f"{kb_id}/{page_key}"


@dataclass(frozen=True)
class PageLinks:
    """Each page's (kb_id, tenant, page_key), kind and the keys its body links to: the one pass over the page
    bodies (178 million characters at 10,000 articles) that both link checks read."""

    keys: list[tuple[str, str, str]]
    kinds: list[str]
    targets: list[list[str]]


def page_links(pages: Rows) -> PageLinks:
    rows = list(_fields(pages, "kb_id", "tenant", "page_key", "kind", "content_md"))
    return PageLinks(
        keys=[(kb, tenant, key) for kb, tenant, key, _, _ in rows],
        kinds=[kind for _, _, _, kind, _ in rows],
        targets=[linked_keys(body or "") for *_, body in rows],
    )


def _page_links(pages: Rows | PageLinks) -> PageLinks:
    return pages if isinstance(pages, PageLinks) else page_links(pages)


def _table(rows: Rows, *names: str) -> pa.Table:
    """`rows` as an Arrow table of the `names` columns (string columns)."""
    if isinstance(rows, pa.Table):
        return rows.select(list(names))
    return pa.table({name: pa.array([row[name] for row in rows], pa.string()) for name in names})


def _joined(*columns: Any) -> pa.Array:
    """One string per row of (kb_id, tenant, page key) columns: the page's identity, compared in Arrow."""
    return pc.binary_join_element_wise(*columns, "\x1f")


def _known(found: PageLinks) -> pa.Array:
    return pa.array(["\x1f".join(key) for key in found.keys], pa.string())


def broken_links(pages: Rows | PageLinks, links: Rows) -> list[str]:
    """`kb/from -> to` for every `[[pageKey|name]]` in a body and every link row whose target page is missing."""
    found = _page_links(pages)
    known = set(found.keys)
    bad = {
        f"{_key(kb, key)} -> {target}"
        for (kb, tenant, key), targets in zip(found.keys, found.targets)
        for target in targets
        if (kb, tenant, target) not in known
    }
    rows = _table(links, "kb_id", "tenant", "from_page_key", "to_page_key")
    missing = pc.invert(pc.is_in(_joined(rows["kb_id"], rows["tenant"], rows["to_page_key"]), value_set=_known(found)))
    bad |= {f"{_key(kb, source)} -> {target}" for kb, _, source, target in _fields(rows.filter(missing), *rows.column_names)}
    return sorted(bad)


def orphan_pages(pages: Rows | PageLinks, links: Rows) -> list[str]:
    """Entity and concept pages no other page links to, by a link row or a `[[...]]` in its body."""
    found = _page_links(pages)
    rows = _table(links, "kb_id", "tenant", "from_page_key", "to_page_key")
    rows = rows.filter(pc.not_equal(rows["from_page_key"], rows["to_page_key"]))
    by_body = ["\x1f".join((kb, tenant, k)) for (kb, tenant, key), targets in zip(found.keys, found.targets) for k in targets if k != key]
    linked = pa.concat_arrays([_joined(rows["kb_id"], rows["tenant"], rows["to_page_key"]).combine_chunks(), pa.array(by_body, pa.string())])
    unlinked = pc.invert(pc.is_in(_known(found), value_set=pc.unique(linked))).to_pylist()
    return sorted(
        _key(kb, key) for (kb, _, key), kind, alone in zip(found.keys, found.kinds, unlinked) if alone and kind not in ROOT_KINDS
    )


def pages_with_outdated_sources(pages: Rows, sources: Rows, articles: Rows) -> dict[str, list[str]]:
    """`{"deleted": [...], "stale": [...]}`: pages built from an article that is gone, or from an older
    version of one that changed since."""
    version = dict(_fields(articles, "article_id", "article_version"))
    deleted: set[str] = set()
    stale: set[str] = set()
    for kb, page_key, article_id, article_version in _fields(sources, "kb_id", "page_key", "article_id", "article_version"):
        if article_id not in version:
            deleted.add(_key(kb, page_key))
        elif article_version != version[article_id]:
            stale.add(_key(kb, page_key))
    for kb, page_key, article_ids in _fields(pages, "kb_id", "page_key", "article_ids"):
        if any(a not in version for a in article_ids or ()):
            deleted.add(_key(kb, page_key))
    return {"deleted": sorted(deleted), "stale": sorted(stale - deleted)}


def outdated_articles(articles: Rows, *, chunk_algorithm_version: int, build_version: int) -> list[str]:
    """Articles chunked by another chunk algorithm or built by another build version than the current ones."""
    return sorted(
        article_id
        for article_id, chunking, build in _fields(articles, "article_id", "chunk_algorithm_version", "build_version")
        if chunking != chunk_algorithm_version or build != build_version
    )
