"""Snapshot tables held column-wise in memory for recall: Python lists for what hits display, numpy arrays
for what access masks and BM25 compute over. Row numbers are the tables' own order, which is also the
tie-break order of every ranking.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petrichor_pipeline.contract.manifest import generated_by_model
from petrichor_pipeline.text.lexical import wiki_extra
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

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self._convert(v) for v in self._column[i].to_pylist()]
        return self._convert(self._column[i].as_py())


def _lazy(table: pa.Table, name: str) -> ColumnValues:
    return ColumnValues(table.column(name))


def _rows_of(keys: pa.ChunkedArray, ids: Sequence[str]) -> np.ndarray:
    """Row numbers of `keys` (a column) in another table whose rows have the unique `ids`, -1 where absent
    (a -1 row is never allowed). Matched by Arrow's hash join: no Python string per key."""
    found = pc.index_in(keys, value_set=pa.array(ids, pa.string()))
    return found.fill_null(-1).to_numpy().astype(np.int64)


def parse_expiry(value: str | None) -> datetime | None:
    """`share_expires_at` as an aware datetime; None when unset. Unparseable counts as already expired,
    so a typo never publishes an article."""
    if value is None or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


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
    def from_arrow(cls, table: pa.Table) -> "Articles":
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

    ids: list[str]
    kb_ids: Sequence[str]
    article_rows: np.ndarray
    headings: Sequence[str]
    heading_paths: Sequence[tuple[str, ...]]
    contents: Sequence[str]
    row_of: dict[str, int] = field(repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table, articles: Articles) -> "Chunks":
        ids = _text(_col(table, "chunk_id"))
        return cls(
            ids=ids,
            kb_ids=_lazy(table, "kb_id"),
            article_rows=_rows_of(table.column("article_id"), articles.ids),
            headings=_lazy(table, "heading"),
            heading_paths=ColumnValues(table.column("heading_path"), _path_value),
            contents=_lazy(table, "content"),
            row_of={c: i for i, c in enumerate(ids)},
        )


@dataclass(frozen=True)
class Windows:
    """Child windows of the chunks: what the window routes match, each scoring its parent chunk."""

    ids: list[str]
    chunk_rows: np.ndarray
    article_rows: np.ndarray
    contents: Sequence[str]
    starts: np.ndarray
    ends: np.ndarray
    row_of: dict[str, int] = field(repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table, articles: Articles, chunks: Chunks) -> "Windows":
        ids = _text(_col(table, "window_id"))
        return cls(
            ids=ids,
            chunk_rows=_rows_of(table.column("chunk_id"), chunks.ids),
            article_rows=_rows_of(table.column("article_id"), articles.ids),
            contents=_lazy(table, "content"),
            starts=np.asarray(_col(table, "start"), dtype=np.int64),
            ends=np.asarray(_col(table, "end"), dtype=np.int64),
            row_of={w: i for i, w in enumerate(ids)},
        )


class IdRows(Mapping[str, int]):
    """id -> row over an Arrow column of unique ids, its dict built on the first lookup: a table that only
    some routes read (the generated questions, three per chunk) costs no Python string per row until then."""

    def __init__(self, column: pa.ChunkedArray):
        self._column = column
        self._rows: dict[str, int] | None = None
        self._lock = threading.Lock()

    def _built(self) -> dict[str, int]:
        if self._rows is None:
            with self._lock:
                if self._rows is None:
                    self._rows = {v: i for i, v in enumerate(_text(self._column.to_pylist()))}
        return self._rows

    def __getitem__(self, key: str) -> int:
        return self._built()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._built()

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._column)


@dataclass(frozen=True)
class Questions:
    chunk_rows: np.ndarray
    article_rows: np.ndarray
    questions: Sequence[str]
    row_of: Mapping[str, int] = field(repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table, articles: Articles, chunks: Chunks) -> "Questions":
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
    def from_arrow(cls, table: pa.Table) -> "WikiPages":
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


@dataclass(frozen=True)
class TreeNodes:
    keys: list[str]
    kb_ids: list[str]
    article_rows: np.ndarray
    titles: list[str]
    summaries: Sequence[str]
    contents: Sequence[str]
    heading_paths: list[tuple[str, ...]]
    """Titles from the first heading level down to the node; the root (the article itself) is left out."""
    row_of: dict[str, int] = field(repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table, articles: Articles) -> "TreeNodes":
        keys = _text(_col(table, "node_key"))
        titles = _text(_col(table, "title"))
        parents = _col(table, "parent_key")
        depths = _col(table, "depth")
        row_of = {k: i for i, k in enumerate(keys)}
        paths: list[tuple[str, ...] | None] = [None] * len(keys)

        def path(row: int) -> tuple[str, ...]:
            chain: list[int] = []
            current: int | None = row
            while current is not None and paths[current] is None and current not in chain:
                chain.append(current)
                parent = parents[current]
                current = row_of.get(parent) if parent else None
            prefix = paths[current] if current is not None and paths[current] is not None else ()
            for r in reversed(chain):
                prefix = prefix + ((titles[r],) if (depths[r] or 0) > 0 else ())
                paths[r] = prefix
            return paths[row] or ()

        return cls(
            keys=keys,
            kb_ids=_text(_col(table, "kb_id")),
            article_rows=_rows_of(table.column("article_id"), articles.ids),
            titles=titles,
            summaries=_lazy(table, "summary"),
            contents=_lazy(table, "content"),
            heading_paths=[path(i) for i in range(len(keys))],
            row_of=row_of,
        )
