"""Snapshot tables held column-wise in memory for recall: Arrow columns read row by row for what hits
display (ids, titles, texts), Python lists only for the small tables (articles, wiki pages), numpy arrays for
what access masks and BM25 compute over. Row numbers are the tables' own order, which is also the tie-break
order of every ranking.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petrichor_core.contract.manifest import generated_by_model
from petrichor_core.text.lexical import wiki_extra
from petrichor_serving.recall.hits import normalize_knowledge_text


@dataclass(frozen=True)
class VectorTable:
    """A snapshot vector table a route searches, and the recall table whose ids key its rows. Declared by
    the routes (`routes.vector_tables()`) and handed to `RecallIndex.build`, which loads what they name."""

    name: str
    """The manifest's vector table name, e.g. `chunk_vectors`."""
    rows: str
    """The `RecallIndex` table (`chunks`, `windows`, `questions`) whose `row_of` maps the vector ids."""


WIKI_EXCLUDED_KINDS = frozenset({"source", "index", "log"})
"""Per-article source pages, the index and the log restate other pages; the wiki route skips them."""


def _col(table: pa.Table, name: str) -> list:
    return table.column(name).to_pylist()


def _text(values: list) -> list[str]:
    return [v or "" for v in values]


def _text_value(value: str | None) -> str:
    return value or ""


def _path_value(value: list[str] | None) -> tuple[str, ...]:
    return tuple(value or ())


class ColumnValues(Sequence):
    """A column read row by row from the snapshot's Arrow buffers, each value converted as it is read (a
    string with null as "", a heading path as a tuple): what only returned hits display is not held again
    as one Python object per row."""

    def __init__(self, column: pa.ChunkedArray, convert: Callable[[Any], Any] = _text_value):
        self._column, self._convert = column, convert

    def __len__(self) -> int:
        return len(self._column)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._convert(v) for v in self._column[i].to_pylist()]
        return self._convert(self._column[i].as_py())

    def arrow(self) -> pa.Array:
        """The column as one Arrow array (zero-copy when it is one chunk, as a mapped table's is)."""
        column = self._column
        if isinstance(column, pa.ChunkedArray):
            return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        return column


def _ints(table: pa.Table, name: str) -> np.ndarray:
    """An integer column as an int64 array, without a Python int per row."""
    return table.column(name).to_numpy().astype(np.int64) if table.num_rows else np.zeros(0, np.int64)


def _lazy(table: pa.Table, name: str) -> ColumnValues:
    return ColumnValues(table.column(name))


def _rows_of(keys: pa.ChunkedArray, ids: Sequence[str]) -> np.ndarray:
    """Row numbers of `keys` (a column) in another table whose rows have the unique `ids` (a list, or a
    `ColumnValues` over the id column), -1 where absent (a -1 row is never allowed). Matched by Arrow's hash
    join: no Python string per key. int32, as the snapshot stores row numbers: half the bytes of the parent
    rows held per chunk, window, question and tree node."""
    value_set = ids.arrow() if isinstance(ids, ColumnValues) else pa.array(ids, pa.string())
    found = pc.index_in(keys, value_set=value_set)
    return found.fill_null(-1).to_numpy().astype(np.int32)


def parse_expiry(value: str | None) -> datetime | None:
    """`share_expires_at` as an aware datetime; None when unset. Unparseable counts as already expired,
    so a typo never publishes an article."""
    if value is None or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Articles:
    ids: list[str]
    kb_ids: list[str]
    titles: list[str]
    contents: Sequence[str]
    tenant_arr: np.ndarray
    kb_arr: np.ndarray
    id_arr: np.ndarray
    shareable: np.ndarray
    """visibility == "public" and not password protected (expiry is checked per request)."""
    expires: list[datetime | None]
    row_of: dict[str, int] = field(repr=False)
    model_questions: bool = False
    """Some article's generated questions came from a configured model (`contract.manifest.generated_by_model`)."""

    @classmethod
    def from_arrow(cls, table: pa.Table) -> Articles:
        ids = _text(_col(table, "article_id"))
        kb_ids = _text(_col(table, "kb_id"))
        visibility = _col(table, "visibility")
        protected = _col(table, "password_protected")
        return cls(
            ids=ids,
            kb_ids=kb_ids,
            titles=_text(_col(table, "title")),
            contents=_lazy(table, "content"),
            tenant_arr=np.array(_text(_col(table, "tenant")), dtype=object),
            kb_arr=np.array(kb_ids, dtype=object),
            id_arr=np.array(ids, dtype=object),
            shareable=np.array([v == "public" and not p for v, p in zip(visibility, protected)], dtype=bool),
            expires=[parse_expiry(v) for v in _col(table, "share_expires_at")],
            row_of={a: i for i, a in enumerate(ids)},
            model_questions=any(generated_by_model(fp) for fp in _col(table, "chat_fingerprint"))
            if "chat_fingerprint" in table.column_names
            else False,
        )


@dataclass(frozen=True)
class Chunks:
    """A chunk's kb, heading and heading path are read from the table when a hit shows them (the index keeps
    each hit's fields: `RecallIndex._chunk_display`), not held as Python objects for every chunk."""

    ids: Sequence[str]
    kb_ids: Sequence[str]
    article_rows: np.ndarray
    headings: Sequence[str]
    heading_paths: Sequence[tuple[str, ...]]
    contents: Sequence[str]
    row_of: Mapping[str, int] = field(repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table, articles: Articles) -> Chunks:
        return cls(
            ids=_lazy(table, "chunk_id"),
            kb_ids=_lazy(table, "kb_id"),
            article_rows=_rows_of(table.column("article_id"), articles.ids),
            headings=_lazy(table, "heading"),
            heading_paths=ColumnValues(table.column("heading_path"), _path_value),
            contents=_lazy(table, "content"),
            row_of=IdRows(table.column("chunk_id")),
        )


@dataclass(frozen=True)
class Windows:
    """Child windows of the chunks: what the window routes match, each scoring its parent chunk."""

    ids: Sequence[str]
    chunk_rows: np.ndarray
    article_rows: np.ndarray
    contents: Sequence[str]
    starts: np.ndarray
    ends: np.ndarray
    row_of: Mapping[str, int] = field(repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table, articles: Articles, chunks: Chunks) -> Windows:
        return cls(
            ids=_lazy(table, "window_id"),
            chunk_rows=_rows_of(table.column("chunk_id"), chunks.ids),
            article_rows=_rows_of(table.column("article_id"), articles.ids),
            contents=_lazy(table, "content"),
            starts=_ints(table, "start"),
            ends=_ints(table, "end"),
            row_of=IdRows(table.column("window_id")),
        )


class IdRows(Mapping[str, int]):
    """id -> row over an Arrow column of unique ids, with no Python string or dict entry per row: on the first
    lookup Arrow sorts the ids once (a copy of the id bytes and a row number each), and a lookup is Arrow's
    binary search (`search_sorted`). The dicts of the chunk, window and tree node ids with their strings held
    about 80 MB of each serving process at 100,000 chunks; a lookup costs 6–10 µs instead of a dict's
    0.1, and happens per tool call or answer, not per scored row. An id repeated (which the
    snapshot's checks refuse) maps to its last row, as a dict built in row order would."""

    def __init__(self, column: pa.ChunkedArray | pa.Array):
        self._column = column
        self._index: tuple[pa.Array, np.ndarray] | None = None
        self._lock = threading.Lock()

    def _sorted(self) -> tuple[pa.Array, np.ndarray]:
        if self._index is None:
            with self._lock:
                if self._index is None:
                    order = pc.sort_indices(self._column)  # stable: equal ids keep row order
                    ids = pc.take(self._column, order)
                    ids = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
                    self._index = (ids, order.to_numpy().astype(np.int64))
        return self._index

    def rows_of(self, keys: Sequence[str] | pa.Array) -> np.ndarray:
        """The row of each key, -1 where no row has it: one binary search for all of them."""
        needles = keys if isinstance(keys, (pa.Array, pa.ChunkedArray)) else pa.array(list(keys), pa.string())
        if not len(needles) or not len(self._column):
            return np.full(len(needles), -1, dtype=np.int64)
        ids, order = self._sorted()
        last = pc.search_sorted(ids, needles, side="right").to_numpy(zero_copy_only=False).astype(np.int64) - 1
        at = np.maximum(last, 0)
        equal = pc.equal(ids.take(pa.array(at)), needles).to_numpy(zero_copy_only=False)
        return np.where((last >= 0) & np.asarray(equal, dtype=bool), order[at], -1)

    def get(self, key: object, default: Any = None) -> Any:
        if not isinstance(key, str):
            return default
        row = int(self.rows_of([key])[0])
        return default if row < 0 else row

    def __getitem__(self, key: str) -> int:
        row = self.get(key)
        if row is None:
            raise KeyError(key)
        return row

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None

    def __iter__(self) -> Iterator[str]:
        return (v or "" for v in self._column.to_pylist())

    def __len__(self) -> int:
        return len(self._column)


def rows_for(row_of: Mapping[str, int], ids: Sequence[str]) -> np.ndarray:
    """The row of each id in a recall table, -1 where none has it: `IdRows.rows_of`'s one binary search
    for all of them, or a lookup per id in any other mapping."""
    if isinstance(row_of, IdRows):
        return row_of.rows_of(ids)
    return np.fromiter((row_of.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))


@dataclass(frozen=True)
class Questions:
    chunk_rows: np.ndarray
    article_rows: np.ndarray
    questions: Sequence[str]
    row_of: Mapping[str, int] = field(repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table, articles: Articles, chunks: Chunks) -> Questions:
        return cls(
            chunk_rows=_rows_of(table.column("chunk_id"), chunks.ids),
            article_rows=_rows_of(table.column("article_id"), articles.ids),
            questions=_lazy(table, "question"),
            row_of=IdRows(table.column("question_id")),
        )


@dataclass(frozen=True)
class WikiPages:
    keys: list[str]
    kb_ids: list[str]
    titles: list[str]
    summaries: list[str]
    contents: list[str]
    extras: list[str]
    """Page key and aliases: the "extra" field of the wiki score."""
    category_paths: list[tuple[str, ...]]
    article_ids: list[tuple[str, ...]]
    tenants: list[str]
    searchable: np.ndarray
    norm_title: list[str] = field(repr=False)
    norm_summary: list[str] = field(repr=False)
    norm_content: list[str] = field(repr=False)
    norm_extra: list[str] = field(repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table) -> WikiPages:
        keys = _text(_col(table, "page_key"))
        titles = _text(_col(table, "title"))
        summaries = _text(_col(table, "summary"))
        contents = _text(_col(table, "content_md"))
        extras = [wiki_extra(k, a) for k, a in zip(keys, _col(table, "aliases"))]
        kb_ids = _text(_col(table, "kb_id"))
        norm = normalize_knowledge_text
        return cls(
            keys=keys,
            kb_ids=kb_ids,
            titles=titles,
            summaries=summaries,
            contents=contents,
            extras=extras,
            category_paths=[tuple(p or ()) for p in _col(table, "category_path")],
            article_ids=[tuple(a or ()) for a in _col(table, "article_ids")],
            tenants=_text(_col(table, "tenant")),
            searchable=np.array([k not in WIKI_EXCLUDED_KINDS for k in _col(table, "kind")], dtype=bool),
            norm_title=[norm(t) for t in titles],
            norm_summary=[norm(s) for s in summaries],
            norm_content=[norm(c) for c in contents],
            norm_extra=[norm(e) for e in extras],
        )


class HeadingPaths(Sequence[tuple[str, ...]]):
    """Each tree node's titles from the first heading level down to it (the root, the article itself, left
    out), walked up its parent rows when a hit shows it: one integer per node instead of a tuple per node.
    A parent chain that loops stops where it would repeat a node."""

    def __init__(self, parents: np.ndarray, depths: np.ndarray, titles: Sequence[str]):
        self._parents, self._depths, self._titles = parents, depths, titles

    def __len__(self) -> int:
        return len(self._parents)

    def __getitem__(self, row):
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        chain: list[int] = []
        current = int(row)
        while current >= 0 and current not in chain:
            chain.append(current)
            current = int(self._parents[current])
        return tuple(self._titles[r] for r in reversed(chain) if self._depths[r] > 0)


@dataclass(frozen=True)
class TreeNodes:
    keys: Sequence[str]
    kb_ids: Sequence[str]
    article_rows: np.ndarray
    titles: Sequence[str]
    summaries: Sequence[str]
    contents: Sequence[str]
    heading_paths: Sequence[tuple[str, ...]]
    """Titles from the first heading level down to the node; the root (the article itself) is left out."""
    row_of: Mapping[str, int] = field(repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table, articles: Articles) -> TreeNodes:
        keys, titles = _lazy(table, "node_key"), _lazy(table, "title")
        depths = table.column("depth").fill_null(0).to_numpy().astype(np.int64) if table.num_rows else np.zeros(0, np.int64)
        return cls(
            keys=keys,
            kb_ids=_lazy(table, "kb_id"),
            article_rows=_rows_of(table.column("article_id"), articles.ids),
            titles=titles,
            summaries=_lazy(table, "summary"),
            contents=_lazy(table, "content"),
            heading_paths=HeadingPaths(_rows_of(table.column("parent_key"), keys), depths, titles),
            row_of=IdRows(table.column("node_key")),
        )
