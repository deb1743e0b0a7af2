"""The snapshot's tables: their Arrow schemas, the pandera rules every row keeps, and the build's own
warehouse schemas derived from them. The pipeline validates what it writes and serving what it loads,
with the same rules (`validate_table`)."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from petrichor_core.contract.files import PARSER_LOCK

_str = pa.string()
_strs = pa.list_(pa.string())
_SCOPE = [("kb_id", _str), ("tenant", _str)]
"""What every content row carries, so access filters apply before ranking."""
_ARTICLE_SCOPE = [("article_id", _str), *_SCOPE]
_SPAN = [("start", pa.int64()), ("end", pa.int64())]
"""Character offsets into the article's normalised text."""
_INDEXED = [("index_text", _str), ("content_hash", _str)]
"""The text a row is tokenised and embedded from, and its hash (what vectors are cached by)."""

SCHEMAS: dict[str, pa.Schema] = {
    "articles": pa.schema(
        [
            ("article_id", _str),
            ("kb_id", _str),
            ("path", _str),
            ("title", _str),
            ("tenant", _str),
            ("visibility", _str),
            ("share_expires_at", _str),
            ("password_protected", pa.bool_()),
            ("article_version", _str),
            ("source_sha256", _str),
            ("content", _str),
            ("chunk_algorithm_version", pa.int32()),
            ("build_version", pa.int32()),
            ("chat_fingerprint", _str),
            ("bucket", _str),
            ("chunk_count", pa.int32()),
            ("warnings", _strs),
        ]
    ),
    "chunks": pa.schema(
        [
            ("chunk_id", _str),
            *_ARTICLE_SCOPE,
            ("key", _str),
            ("position", pa.int32()),
            ("heading", _str),
            ("heading_path", _strs),
            ("content", _str),
            *_SPAN,
            *_INDEXED,
        ]
    ),
    "chunk_windows": pa.schema(
        [
            ("window_id", _str),
            ("chunk_id", _str),
            *_ARTICLE_SCOPE,
            ("position", pa.int32()),
            ("heading_path", _strs),
            ("content", _str),
            *_SPAN,
            *_INDEXED,
        ]
    ),
    "questions": pa.schema(
        [
            ("question_id", _str),
            ("chunk_id", _str),
            *_ARTICLE_SCOPE,
            ("position", pa.int32()),
            ("question", _str),
            *_INDEXED,
        ]
    ),
    "wiki_pages": pa.schema(
        [
            ("page_key", _str),
            *_SCOPE,
            ("kind", _str),
            ("title", _str),
            ("summary", _str),
            ("content_md", _str),
            ("aliases", _strs),
            ("category_path", _strs),
            ("article_ids", _strs),
        ]
    ),
    "wiki_links": pa.schema(
        [
            *_SCOPE,
            ("from_page_key", _str),
            ("to_page_key", _str),
            ("link_type", _str),
            ("description", _str),
        ]
    ),
    "wiki_sources": pa.schema(
        [
            *_SCOPE,
            ("page_key", _str),
            ("article_id", _str),
            ("article_version", _str),
            ("chunk_id", _str),
            ("note", _str),
        ]
    ),
    "tree_nodes": pa.schema(
        [
            ("node_key", _str),
            ("parent_key", _str),
            *_ARTICLE_SCOPE,
            ("depth", pa.int32()),
            ("position", pa.int32()),
            ("title", _str),
            ("summary", _str),
            ("content", _str),
            ("start_line", pa.int32()),
            ("end_line", pa.int32()),
            ("token_estimate", pa.int32()),
            ("content_hash", _str),
        ]
    ),
    "lexical_index": pa.schema(
        [
            ("index", _str),
            ("term", _str),
            ("rows", pa.list_(pa.int32())),
            ("weights", pa.list_(pa.float32())),
        ]
    ),
}
"""Snapshot Parquet tables. Every content row carries `kb_id` and `tenant` so access filters apply before
ranking; `chunk_windows` are the chunks' child windows (`text.windows`), embedded and indexed on their own
and scored as their parent chunk; `lexical_index` holds the BM25 postings over the other tables' rows (see `text.lexical`)."""

VECTOR_TABLES = {
    "chunk_vectors": ("chunks", "chunk_id"),
    "question_vectors": ("questions", "question_id"),
    "window_vectors": ("chunk_windows", "window_id"),
}
"""Vector table -> the snapshot table and id column its rows embed."""

# ------------------------------------------------------------------------------ build warehouse tables

SOURCE_SCHEMA = pa.schema([f for f in SCHEMAS["articles"] if f.name not in ("chunk_count", "chat_fingerprint")])
"""The build's `articles` table stores the sources; the snapshot adds what the build derived (chunk count, model)."""

_PAGE_CONTRIBUTION = pa.struct(
    [("page_key", _str), ("kind", _str), ("title", _str), ("summary", _str), ("content_md", _str), ("aliases", _strs), ("category_path", _strs)]
)
_LINK_CONTRIBUTION = pa.struct([("from_page_key", _str), ("to_page_key", _str), ("link_type", _str), ("description", _str)])
_SOURCE_REF = pa.struct([("page_key", _str), ("chunk_key", _str), ("note", _str)])
CANDIDATE_SCHEMA = pa.schema(
    [
        *_ARTICLE_SCOPE,
        ("article_version", _str),
        ("title", _str),
        ("summary", _str),
        ("digest", _str),
        ("pages", pa.list_(_PAGE_CONTRIBUTION)),
        ("links", pa.list_(_LINK_CONTRIBUTION)),
        ("sources", pa.list_(_SOURCE_REF)),
        ("warnings", _strs),
        ("model_calls", pa.int32()),
    ]
)
"""The build's `wiki_candidates` table: one row per article, its wiki contribution (`ArticleKnowledge.to_row()`),
nested rather than JSON so that aggregating 10,000 contributions reads Arrow columns instead of parsing
and building Python objects. `pages` holds the source page first; `digest` identifies the contribution."""

LEGACY_CANDIDATE_SCHEMA = pa.schema([*_ARTICLE_SCOPE, ("knowledge_json", _str)])
"""The `wiki_candidates` table before it was nested: each contribution as `ArticleKnowledge.to_dict()` JSON."""

# ------------------------------------------------------------------------------ pandera validation

UNIQUE = {
    "articles": "article_id",
    "chunks": "chunk_id",
    "chunk_windows": "window_id",
    "questions": "question_id",
    "tree_nodes": "node_key",
}
NON_EMPTY = {
    "articles": ("article_id", "kb_id", "tenant", "title", "article_version"),
    "chunks": ("chunk_id", "article_id", "kb_id", "tenant", "key", "content"),
    "chunk_windows": ("window_id", "chunk_id", "article_id", "content"),
    "questions": ("question_id", "chunk_id", "question"),
    "wiki_pages": ("page_key", "kb_id", "tenant", "title"),
    "tree_nodes": ("node_key", "article_id"),
}
NULLABLE = {"share_expires_at", "parent_key", "chunk_id", "description", "note", "summary"}


def _polars_type(t: pa.DataType):
    import polars as pl

    return cast("pl.Series", pl.from_arrow(pa.array([], type=t))).dtype  # an Arrow array comes back as a Series


@cache
def schema_for(name: str, omit: tuple[str, ...] = ()):
    """The pandera (polars) schema of a snapshot table: types from `SCHEMAS` plus row rules; `omit` names
    columns a reader left unparsed (their bytes are covered by the file's checksum)."""
    import pandera.polars as pdp
    import polars as pl

    cols = {}
    for f in SCHEMAS[name]:
        if f.name in omit:
            continue
        checks = [pdp.Check.str_length(min_value=1)] if f.name in NON_EMPTY.get(name, ()) else []
        cols[f.name] = pdp.Column(_polars_type(f.type), checks=checks, nullable=f.name in NULLABLE, unique=UNIQUE.get(name) == f.name)
    frame_checks = []
    if name in ("chunks", "chunk_windows"):
        frame_checks.append(pdp.Check(lambda df: df.lazyframe.select(pl.col("start") <= pl.col("end")), error="start <= end"))
    if name == "wiki_pages":
        frame_checks.append(
            pdp.Check(
                lambda df: df.lazyframe.select(~pl.struct("kb_id", "tenant", "page_key").is_duplicated()),
                error="page_key unique per (kb_id, tenant)",
            )
        )
    return pdp.DataFrameSchema(cols, checks=frame_checks, strict=True, name=name)


@lru_cache(maxsize=1)
def _pandera_ready() -> None:
    """pandera's first `validate` imports its checks and with them hypothesis, which parses function sources;
    that happens here, once, under `PARSER_LOCK`, since a snapshot load validates beside threads reading vectors."""
    import polars as pl

    with PARSER_LOCK:
        schema_for("articles").validate(pl.from_arrow(SCHEMAS["articles"].empty_table()))


def validate_table(name: str, table: pa.Table, omit: tuple[str, ...] = (), unread: tuple[str, ...] = ()) -> None:
    """Raise `pandera.errors.SchemaError` when the table breaks its contract (pipeline checks and serving both call this).

    `unread` string columns are checked without reading their bytes: a memory-mapped text stays on disk. Their
    type is the table's schema (cast to the contract's when it was read); null and empty values, the only
    row rules a text column has, are read off the validity and offsets buffers."""
    import pandera.errors
    import polars as pl

    _pandera_ready()

    schema_for(name, tuple(omit) + tuple(unread)).validate(pl.from_arrow(table.drop_columns(list(unread))))
    for column in unread:
        values = table.column(column)
        if values.null_count and column not in NULLABLE:
            raise pandera.errors.SchemaError(schema_for(name, tuple(omit)), values, f"{name}.{column}: {values.null_count} null values")
        if column in NON_EMPTY.get(name, ()) and len(values) and pc.min(pc.binary_length(values)).as_py() == 0:
            raise pandera.errors.SchemaError(schema_for(name, tuple(omit)), values, f"{name}.{column}: an empty value")


def vector_schema(dim: int) -> pa.Schema:
    """LanceDB vector rows: `id` is a chunk_id, window_id or question_id; filters use kb_id/tenant/article_id."""
    return pa.schema(
        [
            ("id", _str),
            *_ARTICLE_SCOPE,
            ("content_hash", _str),
            ("fingerprint", _str),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def chunk_id_of(article_id: str, chunk_key: str) -> str:
    """A chunk's id across the snapshot: its article and its `chunk-NNN` key, never a running counter."""
    return f"{article_id}:{chunk_key}"


def empty_table(name: str) -> pa.Table:
    return SCHEMAS[name].empty_table()


def to_table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Rows to an Arrow table with the contract schema (missing optional columns become null)."""
    schema = SCHEMAS[name]
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in rows], schema=schema)


def conform(name: str, table: pa.Table, omit: tuple[str, ...] = ()) -> pa.Table:
    """Cast a table to its contract schema (less the `omit` columns), column order included; raises on a missing column."""
    schema = SCHEMAS[name]
    for column in omit:
        schema = schema.remove(schema.get_field_index(column))
    return table.select([f.name for f in schema]).cast(schema)
