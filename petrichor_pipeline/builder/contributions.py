"""The `wiki_candidates` warehouse table: each article's wiki contribution as one nested row (`CANDIDATE_SCHEMA`).

A warehouse written before the table was nested holds the contributions as JSON (`LEGACY_CANDIDATE_SCHEMA`).
Reading converts them with their digests unchanged, so an upgraded build neither calls the model again for
them nor merges their pages again; the step that owns a bucket's file rewrites it nested once."""

from __future__ import annotations

import json

import pyarrow as pa

from petrichor_core.contract.schemas import CANDIDATE_SCHEMA, LEGACY_CANDIDATE_SCHEMA
from petrichor_pipeline.builder.warehouse import Warehouse
from petrichor_pipeline.knowledge.wiki import contribution_digest, row_of

ASSET = "wiki_candidates"


def read_contributions(wh: Warehouse, bucket: str) -> pa.Table | None:
    """The bucket's contributions as `CANDIDATE_SCHEMA` rows; None when it has none or they cannot be read."""
    table = wh.read(ASSET, bucket, CANDIDATE_SCHEMA)
    if table is not None:
        return table
    legacy = wh.read(ASSET, bucket, LEGACY_CANDIDATE_SCHEMA)
    if legacy is None:
        return None
    texts = legacy.column("knowledge_json").to_pylist()
    return pa.Table.from_pylist([row_of(json.loads(text), contribution_digest(text)) for text in texts], schema=CANDIDATE_SCHEMA)


def upgrade_legacy(wh: Warehouse, bucket: str) -> None:
    """Rewrite the bucket's file nested when it still holds JSON, before the step reuses its rows."""
    stored = wh.read(ASSET, bucket)
    if stored is not None and "knowledge_json" in stored.column_names and (table := read_contributions(wh, bucket)) is not None:
        wh.write(ASSET, table, bucket)
