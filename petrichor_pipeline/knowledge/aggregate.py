"""The knowledge base's wiki, merged from every article's contribution.

Aggregation is a pure function of the current contributions: a page exists while at least one article
supports it, so an article that is removed or no longer mentions an object simply stops contributing,
and orphan pages, their links and their source refs disappear on the next build. Inputs are ordered by
article id, so the same contributions always give the same rows.

A rebuild reuses the previous `wiki_pages` row of every page whose inputs did not change: the memo kept
beside the table records, per page, a signature of its supporters' contributions (article id, digest and
position) and of which of the pages its body links to exist, so the result always equals a full
aggregation while only the pages an edited, added or deleted article touches are merged again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petrichor_core.contract.schemas import CANDIDATE_SCHEMA, SCHEMAS, chunk_id_of
from petrichor_core.text.markdown import has_title_heading, is_title_line
from petrichor_core.versions import WIKI_AGGREGATION_VERSION
from petrichor_pipeline.knowledge.wiki import ArticleKnowledge, contribution_digest, row_of
from petrichor_pipeline.knowledge.wiki_links import resolve_links

ALIAS_LIMIT = 20

_PARAGRAPH_BREAK = re.compile(r"\n{2,}")


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
    met: set[str] = set()  # blocks as written: an exact repeat (half of a hub page's) is decided as its first was
    for body in bodies:
        for block in _PARAGRAPH_BREAK.split(body):
            block = block.strip()
            if block in met:
                continue
            met.add(block)
            if not block or ("\n" not in block and is_title_line(block)):
                continue
            identity = " ".join(block.lower().split())
            if identity not in seen:
                seen.add(identity)
                blocks.append(block)
    return "\n\n".join(blocks)


@dataclass(frozen=True)
class PreviousWiki:
    """The last aggregation's `wiki_pages` table and the memo written with it."""

    pages: pa.Table
    memo: Mapping[str, Any]


@dataclass
class WikiAggregate:
    """The snapshot tables `wiki_pages`, `wiki_links`, `wiki_sources` (`contract.schemas`) and the pages' memo."""

    tables: dict[str, pa.Table]
    memo: dict[str, Any]
    """JSON: {"version": WIKI_AGGREGATION_VERSION, "pages": {kb_id: {tenant: {page_key: [signature, linked keys]}}}}."""
    pages_built: int = 0
    pages_reused: int = 0

    def to_arrow(self) -> dict[str, pa.Table]:
        return self.tables

    @property
    def pages(self) -> list[dict[str, Any]]:
        return self.tables["wiki_pages"].to_pylist()

    @property
    def links(self) -> list[dict[str, Any]]:
        return self.tables["wiki_links"].to_pylist()

    @property
    def sources(self) -> list[dict[str, Any]]:
        return self.tables["wiki_sources"].to_pylist()


def aggregate_wiki(contributions: Sequence[ArticleKnowledge | Mapping[str, Any]], *, previous: PreviousWiki | None = None) -> WikiAggregate:
    """`aggregate_contributions` over contributions given as objects or as their `to_dict()` form."""
    rows = [
        a.to_row() if isinstance(a, ArticleKnowledge) else row_of(a, contribution_digest(json.dumps(a, ensure_ascii=False))) for a in contributions
    ]
    return aggregate_contributions(pa.Table.from_pylist(rows, schema=CANDIDATE_SCHEMA), previous=previous)


def aggregate_contributions(table: pa.Table, *, previous: PreviousWiki | None = None) -> WikiAggregate:
    """Merge contributions (`CANDIDATE_SCHEMA` rows) per (kb_id, tenant) into wiki rows; page keys are unique
    within each pair.

    Per page: title, kind and folder from the first contributing article (by article id) that has
    them, aliases the union of all names and aliases (≤ 20), `article_ids` every contributing article
    (serving shows a page publicly only when all of them are public). Links survive only between pages
    that exist; `[[key|name]]` links in bodies to missing pages become plain text.

    `previous` lets pages whose supporters' contributions (by `digest`) did not change keep their previous
    rows. The contributions stay Arrow columns: only the pages merged again become Python objects.
    """
    keys = ("kb_id", "tenant", "article_id")
    order = pc.sort_indices(table.select(list(keys)), sort_keys=[(k, "ascending") for k in keys]).to_numpy()
    contributions = _Contributions.of(table)
    reusable = _reusable(previous)
    out = _Output()
    scopes = zip(table.column("kb_id").take(order).to_pylist(), table.column("tenant").take(order).to_pylist())
    start = 0
    with ThreadPoolExecutor(max_workers=1) as aside:  # links and sources (Arrow and numpy) beside the pages (Python)
        for (kb_id, tenant), group in groupby(scopes):
            n = len(list(group))
            _aggregate_scope(kb_id, tenant, contributions, order[start : start + n], reusable, out, aside)
            start += n
        links = [f.result() for f in out.links]
        sources = [f.result() for f in out.sources]
    pages = out.pages_table(previous.pages if previous is not None else None)
    return WikiAggregate(
        tables={
            "wiki_pages": pages,
            "wiki_links": _concat("wiki_links", links),
            "wiki_sources": _concat("wiki_sources", sources),
        },
        memo={"version": WIKI_AGGREGATION_VERSION, "pages": out.memo},
        pages_built=out.built,
        pages_reused=len(out.reused),
    )


@dataclass(frozen=True)
class _Reusable:
    rows: dict[tuple[str, str, str], int]
    """(kb_id, tenant, page_key) -> row of the previous table."""
    memo: Mapping[str, Any]


def _reusable(previous: PreviousWiki | None) -> _Reusable:
    if previous is None or previous.memo.get("version") != WIKI_AGGREGATION_VERSION:
        return _Reusable({}, {})
    cols = [previous.pages.column(c).to_pylist() for c in ("kb_id", "tenant", "page_key")]
    return _Reusable({key: i for i, key in enumerate(zip(*cols))}, previous.memo.get("pages") or {})


def _columns(name: str) -> dict[str, list[Any]]:
    return {f.name: [] for f in SCHEMAS[name]}


def _table(name: str, columns: dict[str, list[Any]]) -> pa.Table:
    return pa.Table.from_pydict(columns, schema=SCHEMAS[name])


def _concat(name: str, tables: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(tables) if tables else SCHEMAS[name].empty_table()


@dataclass
class _Output:
    """The rows in output order: new page rows as columns, reused ones as rows of the previous table."""

    new_pages: dict[str, list[Any]] = field(default_factory=lambda: _columns("wiki_pages"))
    links: list[Future[pa.Table]] = field(default_factory=list)
    sources: list[Future[pa.Table]] = field(default_factory=list)
    """Per (kb_id, tenant) in output order."""
    reused: list[int] = field(default_factory=list)
    order: list[int] = field(default_factory=list)
    """Per output page: i >= 0 is the i-th new row, -1 - j the j-th reused one."""
    memo: dict[str, dict[str, dict[str, list[Any]]]] = field(default_factory=dict)
    built: int = 0

    def add_page(self, row: dict[str, Any]) -> None:
        for name, column in self.new_pages.items():
            column.append(row[name])
        self.order.append(self.built)
        self.built += 1

    def reuse_page(self, index: int) -> None:
        self.order.append(-1 - len(self.reused))
        self.reused.append(index)

    def pages_table(self, previous: pa.Table | None) -> pa.Table:
        new = _table("wiki_pages", self.new_pages)
        if not self.reused or previous is None:
            return new
        if not self.built and self.reused == list(range(previous.num_rows)):
            return previous  # nothing merged again, nothing gone: the previous table as it is
        runs: list[list[Any]] = []  # [table, first row, end]: consecutive rows of one table, sliced, not copied
        for i in self.order:
            source, row = (new, i) if i >= 0 else (previous, self.reused[-1 - i])
            if runs and runs[-1][0] is source and runs[-1][2] == row:
                runs[-1][2] += 1
            else:
                runs.append([source, row, row + 1])
        return pa.concat_tables([source.slice(first, end - first) for source, first, end in runs])


def _signature(key: str, support: str, resolved: list[str]) -> str:
    text = "\x1f".join((str(WIKI_AGGREGATION_VERSION), str(ALIAS_LIMIT), key, support, "\x1e".join(resolved)))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class _Items:
    """A list column of the contributions, flattened (never copied), and where each row's items lie."""

    values: pa.ChunkedArray
    starts: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, column: pa.ChunkedArray) -> _Items:
        lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy().astype(np.int64)
        return cls(pc.list_flatten(column), np.cumsum(lengths) - lengths, lengths)

    def of_rows(self, rows: np.ndarray) -> tuple[pa.Array, np.ndarray, np.ndarray]:
        """The items of `rows`, row by row: their indices in `values`, the index in `rows` of each one's row,
        and each one's position in its row's list."""
        lengths = self.lengths[rows]
        owner = np.repeat(np.arange(len(rows)), lengths)
        position = np.arange(len(owner)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return pa.array(self.starts[rows][owner] + position, pa.int64()), owner, position

    def _taken(self, values: pa.ChunkedArray, indices: np.ndarray) -> pa.Array:
        """`values.take(indices)`, each chunk taken on its own (`_by_chunk`)."""
        pieces, positions = [], []
        for chunk, where, local in _by_chunk(values, indices):
            pieces.append(chunk.take(pa.array(local, pa.int64())))
            positions.append(where)
        if not pieces:
            return pa.array([], values.type)
        return pa.concat_arrays(pieces).take(pa.array(np.argsort(np.concatenate(positions)), pa.int64()))

    def pylist(self, indices: np.ndarray) -> list[Any]:
        """The items at `indices` of `values` as Python objects, each chunk taken on its own (`_by_chunk`)."""
        out: list[Any] = [None] * len(indices)
        for chunk, where, local in _by_chunk(self.values, indices):
            for i, value in zip(where.tolist(), chunk.take(pa.array(local, pa.int64())).to_pylist()):
                out[i] = value
        return out

    def field(self, name: str, indices: pa.Array) -> pa.Array:
        """One struct field of the items at `indices` of `values`."""
        return self._taken(pc.struct_field(self.values, name), np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64))

    def fields(self, names: Sequence[str], indices: pa.Array) -> dict[str, pa.Array]:
        """Several struct fields of the items at `indices`, from one take of the struct (its children are
        taken together, and the items are placed back in order once)."""
        taken = self._taken(self.values, np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64))
        return {name: pc.struct_field(taken, name) for name in names}


def _by_chunk(values: pa.ChunkedArray, indices: np.ndarray) -> Iterator[tuple[pa.Array, np.ndarray, np.ndarray]]:
    """Per chunk of `values` that `indices` point into: the chunk, the positions in `indices` pointing into it
    and their indices within it. A take over the chunked column would first concatenate it (the
    contributions' texts: 400 MB at 10,000 articles)."""
    bounds = np.cumsum([0, *(len(chunk) for chunk in values.chunks)])
    chunk_of = np.searchsorted(bounds, indices, side="right") - 1
    for c in np.unique(chunk_of).tolist():
        where = np.flatnonzero(chunk_of == c)
        yield values.chunk(c), where, indices[where] - bounds[c]


@dataclass(frozen=True)
class _Contributions:
    """The `CANDIDATE_SCHEMA` table's columns aggregation reads, in the table's row order."""

    article_ids: pa.ChunkedArray
    ids: list[str]
    digests: list[str]
    versions: pa.ChunkedArray
    pages: _Items
    links: _Items
    sources: _Items

    @classmethod
    def of(cls, table: pa.Table) -> _Contributions:
        ids = table.column("article_id")
        return cls(
            ids,
            ids.to_pylist(),
            table.column("digest").to_pylist(),
            table.column("article_version"),
            *(_Items.of(table.column(name)) for name in ("pages", "links", "sources")),
        )


def _aggregate_scope(
    kb_id: str, tenant: str, contributions: _Contributions, rows: np.ndarray, reusable: _Reusable, out: _Output, aside: ThreadPoolExecutor
) -> None:
    """One (kb_id, tenant)'s pages, links and source rows from its contributions; `rows` are the scope's rows
    of the contributions, in article id order. The links and sources are grouped on `aside` while the pages
    merge: they need only which pages exist."""
    ids = [contributions.ids[r] for r in rows.tolist()]
    if len(set(ids)) != len(ids):
        raise ValueError(f"two contributions for one article in {kb_id}/{tenant}")
    digests = [contributions.digests[r] for r in rows.tolist()]
    items, owners, positions = contributions.pages.of_rows(rows)
    supporters: dict[str, list[int]] = {}  # page key -> its contributions (indices into `items`), by article, then position
    for item, key in enumerate(contributions.pages.field("page_key", items).to_pylist()):
        supporters.setdefault(key, []).append(item)
    owner, position = owners.tolist(), positions.tolist()
    existing = set(supporters)
    out.links.append(aside.submit(_links, kb_id, tenant, contributions, rows, existing))
    out.sources.append(aside.submit(_sources, kb_id, tenant, contributions, rows))
    previous_memo = reusable.memo.get(kb_id, {}).get(tenant, {})
    memo = out.memo.setdefault(kb_id, {})[tenant] = {}

    plan: list[tuple[str, str, int | None]] = []  # (page key, support, previous row to reuse)
    for key in sorted(supporters):
        support = "\x1e".join(f"{ids[owner[i]]}\x1d{digests[owner[i]]}\x1d{position[i]}" for i in supporters[key])
        recorded = previous_memo.get(key)
        row = reusable.rows.get((kb_id, tenant, key))
        if recorded is not None and row is not None and recorded[0] == _signature(key, support, [k for k in recorded[1] if k in existing]):
            plan.append((key, support, row))
        else:
            plan.append((key, support, None))
    merged = sorted({i for key, _, row in plan if row is None for i in supporters[key]})
    taken = contributions.pages.pylist(items.to_numpy()[np.asarray(merged, dtype=np.int64)])
    contributed = dict(zip(merged, taken))  # only the pages merged again become objects
    for key, support, row in plan:
        if row is not None:
            out.reuse_page(row)
            memo[key] = previous_memo[key]
            continue
        page_row, linked = _page_row(kb_id, tenant, key, [(ids[owner[i]], contributed[i], position[i]) for i in supporters[key]], existing)
        out.add_page(page_row)
        memo[key] = [_signature(key, support, [k for k in linked if k in existing]), linked]


def _sorted_runs(columns: Sequence[pa.Array]) -> tuple[np.ndarray, np.ndarray]:
    """The rows ordered by `columns` (texts, compared as Python compares them: by code point), ties in row
    order, and where each run of equal keys starts in that order. The texts are ranked by Arrow and the
    ranks combined into one integer key, so no row becomes a Python tuple."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        ranks = pc.rank(column, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.int64)
        _, key = np.unique(key * (int(ranks.max(initial=0)) + 1) + ranks, return_inverse=True)
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    return order, np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if len(order) else order


def _links(kb_id: str, tenant: str, contributions: _Contributions, rows: np.ndarray, existing: set[str]) -> pa.Table:
    """The scope's link rows: one per (from, to, type) between two existing, different pages, described by
    the first non-empty description in article order (the last one when none is), sorted by (from, to, type).

    Grouped in Arrow and numpy: at 10,000 articles a scope holds about a million contributed links."""
    items, _, _ = contributions.links.of_rows(rows)
    if not len(items):
        return SCHEMAS["wiki_links"].empty_table()
    keys = ("from_page_key", "to_page_key", "link_type")
    table = pa.table(contributions.links.fields((*keys, "description"), items))
    pages = pa.array(sorted(existing), pa.string())
    ends = [table.column(k) for k in keys[:2]]
    table = table.filter(pc.and_(pc.and_(pc.is_in(ends[0], value_set=pages), pc.is_in(ends[1], value_set=pages)), pc.not_equal(*ends)))
    if not table.num_rows:
        return SCHEMAS["wiki_links"].empty_table()
    order, starts = _sorted_runs([table.column(k) for k in keys])
    n = table.num_rows
    described = pc.fill_null(pc.not_equal(table.column("description"), ""), False).to_numpy(zero_copy_only=False)[order]
    first = np.minimum.reduceat(np.where(described, np.arange(n), n), starts)
    last = np.append(starts[1:], n) - 1
    picked = table.take(order[np.where(first < n, first, last)])
    scope = {"kb_id": pa.array([kb_id] * picked.num_rows, pa.string()), "tenant": pa.array([tenant] * picked.num_rows, pa.string())}
    return pa.table({**scope, **{k: picked.column(k) for k in (*keys, "description")}}, schema=SCHEMAS["wiki_links"])


def _sources(kb_id: str, tenant: str, contributions: _Contributions, rows: np.ndarray) -> pa.Table:
    """The scope's source rows: one per (page, article, chunk key), the article's last ref for it winning,
    sorted by (page, article, chunk key); the chunk key becomes the chunk's id (none: the whole article)."""
    items, owner, _ = contributions.sources.of_rows(rows)
    if not len(items):
        return SCHEMAS["wiki_sources"].empty_table()
    articles = pa.array(rows[owner], pa.int64())
    fields = contributions.sources.fields(("page_key", "chunk_key", "note"), items)
    table = pa.table(
        {
            "page_key": fields["page_key"],
            "article_id": contributions.article_ids.take(articles),
            "chunk_key": fields["chunk_key"],
            "article_version": contributions.versions.take(articles),
            "note": fields["note"],
        }
    )
    order, starts = _sorted_runs([table.column(k) for k in ("page_key", "article_id", "chunk_key")])
    picked = table.take(order[np.append(starts[1:], table.num_rows) - 1])
    chunk_ids = [chunk_id_of(a, c) if c else None for a, c in zip(picked.column("article_id").to_pylist(), picked.column("chunk_key").to_pylist())]
    n = picked.num_rows
    return pa.table(
        {
            "kb_id": pa.array([kb_id] * n, pa.string()),
            "tenant": pa.array([tenant] * n, pa.string()),
            "page_key": picked.column("page_key"),
            "article_id": picked.column("article_id"),
            "article_version": picked.column("article_version"),
            "chunk_id": pa.array(chunk_ids, pa.string()),
            "note": picked.column("note"),
        },
        schema=SCHEMAS["wiki_sources"],
    )


def _page_row(
    kb_id: str,
    tenant: str,
    key: str,
    support: list[tuple[str, Mapping[str, Any], int]],
    existing: set[str],
) -> tuple[dict[str, Any], list[str]]:
    """One page merged from its supporters (article id, stored `PageContribution`, position), and the keys
    its merged body links to (its own excluded)."""
    contributions = [page for _, page, _ in support]
    first = contributions[0]
    title = first["title"]
    aliases: list[str] = []
    for name in (a for page in contributions for a in (page["title"], *page["aliases"])):
        if name != title and name not in aliases and len(aliases) < ALIAS_LIMIT:
            aliases.append(name)
    content = render_aggregated_page(title, [p["content_md"] for p in contributions])
    targets: dict[str, None] = {}  # every link's target in order of appearance, read as the links resolve

    def resolve(target: str) -> str | None:
        targets[target] = None
        return target if target in existing and target != key else None

    content_md = resolve_links(content, resolve)
    linked = [k for k in targets if k != key]
    row = {
        "kb_id": kb_id,
        "tenant": tenant,
        "page_key": key,
        "kind": first["kind"],
        "title": title,
        "summary": next((p["summary"] for p in contributions if p["summary"]), ""),
        "content_md": content_md,
        "aliases": aliases,
        "category_path": list(next((p["category_path"] for p in contributions if p["category_path"]), ())),
        "article_ids": sorted({a for a, _, _ in support}),
    }
    return row, linked
