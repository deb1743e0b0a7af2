"""Pandera schemas for every snapshot table, derived from the Arrow contract plus row-level rules.

The pipeline's asset checks and the serving loader run the same validation, so a table that one side
would reject never reaches the other.
"""

from __future__ import annotations

from functools import lru_cache

import pandera.polars as pa
import polars as pl
import pyarrow

from petrichor_pipeline.contract import SCHEMAS

UNIQUE = {
    "articles": "article_id",
    "chunks": "chunk_id",
    "questions": "question_id",
    "tree_nodes": "node_key",
}
NON_EMPTY = {
    "articles": ("article_id", "kb_id", "tenant", "title", "article_version"),
    "chunks": ("chunk_id", "article_id", "kb_id", "tenant", "key", "content"),
    "questions": ("question_id", "chunk_id", "question"),
    "wiki_pages": ("page_key", "kb_id", "tenant", "title"),
    "tree_nodes": ("node_key", "article_id"),
}
NULLABLE = {"share_expires_at", "parent_key", "chunk_id", "description", "note", "summary"}


def _polars_type(t: pyarrow.DataType) -> pl.DataType:
    return pl.from_arrow(pyarrow.array([], type=t)).dtype


@lru_cache(maxsize=None)
def schema_for(name: str) -> pa.DataFrameSchema:
    cols = {}
    for f in SCHEMAS[name]:
        checks = [pa.Check.str_length(min_value=1)] if f.name in NON_EMPTY.get(name, ()) else []
        cols[f.name] = pa.Column(
            _polars_type(f.type), checks=checks, nullable=f.name in NULLABLE, unique=UNIQUE.get(name) == f.name
        )
    frame_checks = []
    if name == "chunks":
        frame_checks.append(pa.Check(lambda df: df.lazyframe.select(pl.col("start") <= pl.col("end")), error="start <= end"))
    if name == "wiki_pages":
        frame_checks.append(
            pa.Check(
                lambda df: df.lazyframe.select(~pl.struct("kb_id", "tenant", "page_key").is_duplicated()),
                error="page_key unique per (kb_id, tenant)",
            )
        )
    return pa.DataFrameSchema(cols, checks=frame_checks, strict=True, name=name)


def validate_table(name: str, table: pyarrow.Table) -> None:
    """Raise `pandera.errors.SchemaError` when the table breaks its contract."""
    schema_for(name).validate(pl.from_arrow(table))
