"""Filtered nearest-neighbour search over a vector table, shared by the vector routes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from petrichor_serving.recall.access import Access, sql_quote
from petrichor_serving.recall.dense import DenseVectors, Scans
from petrichor_serving.recall.tables import rows_for


def nearest(
    table: Any,
    access: Access,
    vector: np.ndarray | None,
    fingerprint: str | None,
    limit: int,
    allowed_rows: np.ndarray,
    row_of: Mapping[str, int],
    scans: Scans | None = None,
) -> list[tuple[int, float]]:
    """(recall row, cosine similarity) of the `limit` nearest rows of this embedding model that `access`
    allows, filtered *before* the top-k is taken (a row mask in memory, a prefilter in LanceDB). A LanceDB
    table's ids map to rows through `row_of` (the recall table's); ids of no row are left out."""
    if not access.any_article:
        return []
    assert vector is not None  # vector routes run only with the query's embedding (`RouteQuery.vector`)
    if isinstance(table, DenseVectors):
        return table.nearest(vector, allowed_rows, limit, fingerprint, scans)
    conditions = [f"({access.vector_filter})"] if access.vector_filter else []
    if fingerprint:
        conditions.append(f"fingerprint = {sql_quote(fingerprint)}")
    query = table.search(np.asarray(vector, dtype=np.float32), vector_column_name="vector")
    query = query.distance_type("cosine")
    if conditions:
        query = query.where(" AND ".join(conditions), prefilter=True)
    result = query.select(["id", "_distance"]).limit(limit).to_arrow()
    distances = result.column("_distance").to_pylist()
    rows = rows_for(row_of, result.column("id").to_pylist()).tolist()
    return [(row, 1.0 - d) for row, d in zip(rows, distances) if row >= 0 and allowed_rows[row]]
