"""The recall routes (reference §6.3). Each returns one ranked list of hits for one query, drawn only from
the rows its `Access` allows.

Modern routes: chunk_vector, question_vector, chunk_bm25, question_bm25, wiki. `article_title` backs up a
query both BM25 routes missed; the legacy tree routes run only when no modern route found anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from petrichor_serving.recall.dense import DenseVectors
from petrichor_serving.recall.access import Access, sql_quote
from petrichor_serving.recall.hits import Hit, normalize_knowledge_text
from petrichor_serving.recall.index import RecallIndex

VECTOR_TOP_K = 10
BM25_TOP_K = 10
WIKI_TOP_K = 10
LEXICAL_POOL = 400
"""Wiki pages field-scored per query: the best by BM25, as the reference caps its candidate query."""
QUESTION_VECTOR_FETCH = 30
"""Several questions of one chunk can crowd the nearest neighbours; fetch more, then keep one per chunk."""
ARTICLE_TITLE_SCORE = 0.4

CHUNK_VECTOR = "chunk_vector"
QUESTION_VECTOR = "question_vector"
CHUNK_BM25 = "chunk_bm25"
QUESTION_BM25 = "question_bm25"
WIKI = "wiki"
ARTICLE_TITLE = "article_title"
TREE_VECTOR = "tree_vector"
TREE_BM25 = "tree_bm25"
MODERN_ROUTES = (CHUNK_VECTOR, QUESTION_VECTOR, CHUNK_BM25, QUESTION_BM25, WIKI)


# ------------------------------------------------------------------------------------------------ BM25


def chunk_bm25(index: RecallIndex, access: Access, terms: Sequence[str]) -> list[Hit]:
    ranked = index.chunk_bm25.top(terms, BM25_TOP_K, access.chunks)
    return [index.chunk_hit(r.row, CHUNK_BM25, r.score) for r in ranked]


def question_bm25(index: RecallIndex, access: Access, terms: Sequence[str]) -> list[Hit]:
    """Ranked over question rows; a chunk counts once, through its best-scoring question."""
    chunk_rows = index.questions.chunk_rows
    ranked = index.question_bm25.top(terms, BM25_TOP_K, access.questions, group=lambda r: int(chunk_rows[r]))
    return [
        index.chunk_hit(int(chunk_rows[r.row]), QUESTION_BM25, r.score, question_row=r.row) for r in ranked
    ]


def tree_bm25(index: RecallIndex, access: Access, terms: Sequence[str]) -> list[Hit]:
    return [index.tree_hit(r.row, TREE_BM25, r.score) for r in index.tree_bm25.top(terms, BM25_TOP_K, access.tree)]


# ------------------------------------------------------------------------------------------ lexical


def score_knowledge_fields(
    title: str, summary: str, content: str, extra: str, query_norm: str, tokens: Sequence[str]
) -> float:
    """Whole normalised query in title / summary / content / extra: +8 / +4 / +2 / +2; each normalised
    token: +4 / +2 / +1 / +1. All arguments are already normalised."""
    score = 0.0
    if query_norm:
        score += 8 * (query_norm in title) + 4 * (query_norm in summary)
        score += 2 * (query_norm in content) + 2 * (query_norm in extra)
    for token in tokens:
        score += 4 * (token in title) + 2 * (token in summary) + (token in content) + (token in extra)
    return score


def wiki_lexical(index: RecallIndex, access: Access, query: str, terms: Sequence[str]) -> list[Hit]:
    """Readable entity/concept pages scored field by field; the pool is the `LEXICAL_POOL` best by BM25."""
    w = index.wiki
    query_norm = normalize_knowledge_text(query)
    tokens = [t for t in map(normalize_knowledge_text, terms) if t]
    pool = sorted(r.row for r in index.wiki_bm25.top(terms, LEXICAL_POOL, access.wiki))
    scored: list[tuple[float, int]] = []
    for row in pool:
        score = score_knowledge_fields(
            w.norm_title[row], w.norm_summary[row], w.norm_content[row], w.norm_extra[row], query_norm, tokens
        )
        if score > 0:
            scored.append((score, row))
    scored.sort(key=lambda item: -item[0])  # stable: ties keep table order
    return [index.wiki_hit(row, WIKI, score) for score, row in scored[:WIKI_TOP_K]]


def article_title(index: RecallIndex, access: Access, terms: Sequence[str]) -> list[Hit]:
    """Readable articles whose title contains a query token (case-insensitive), in table order."""
    if not terms:
        return []
    hits: list[Hit] = []
    titles = index.articles.titles
    for row in np.flatnonzero(access.articles).tolist():
        title = titles[row].lower()
        if any(t in title for t in terms):
            hits.append(index.article_hit(row, ARTICLE_TITLE, ARTICLE_TITLE_SCORE))
            if len(hits) >= BM25_TOP_K:
                break
    return hits


# ------------------------------------------------------------------------------------------- vectors


def _nearest(
    table: Any, access: Access, vector: np.ndarray, fingerprint: str | None, limit: int, allowed_rows: np.ndarray
) -> list[tuple[str, float]]:
    """(id, cosine similarity) of the `limit` nearest rows of this embedding model that `access` allows,
    filtered *before* the top-k is taken (a row mask in memory, a prefilter in LanceDB)."""
    if not access.any_article:
        return []
    if isinstance(table, DenseVectors):
        return table.nearest(vector, allowed_rows, limit, fingerprint)
    conditions = [f"({access.vector_filter})"] if access.vector_filter else []
    if fingerprint:
        conditions.append(f"fingerprint = {sql_quote(fingerprint)}")
    query = table.search(np.asarray(vector, dtype=np.float32), vector_column_name="vector")
    query = query.distance_type("cosine")
    if conditions:
        query = query.where(" AND ".join(conditions), prefilter=True)
    result = query.select(["id", "_distance"]).limit(limit).to_arrow()
    distances = result.column("_distance").to_pylist()
    return [(row_id, 1.0 - d) for row_id, d in zip(result.column("id").to_pylist(), distances)]


def _nearest_rows(
    table: Any, row_of: Mapping[str, int], allowed: np.ndarray, access: Access, vector: np.ndarray, fingerprint: str | None
) -> list[tuple[int, float]]:
    """(recall row, similarity) of the `VECTOR_TOP_K` nearest readable vectors of a table keyed by row id."""
    out = []
    for key, similarity in _nearest(table, access, vector, fingerprint, VECTOR_TOP_K, allowed):
        row = row_of.get(key)
        if row is not None and allowed[row]:
            out.append((row, similarity))
    return out


def chunk_vector(
    index: RecallIndex, access: Access, vector: np.ndarray, fingerprint: str | None
) -> list[Hit]:
    nearest = _nearest_rows(index.chunk_vectors, index.chunks.row_of, access.chunks, access, vector, fingerprint)
    return [index.chunk_hit(row, CHUNK_VECTOR, similarity) for row, similarity in nearest]


def question_vector(
    index: RecallIndex, access: Access, vector: np.ndarray, fingerprint: str | None
) -> list[Hit]:
    hits: list[Hit] = []
    seen: set[int] = set()
    nearest = _nearest(index.question_vectors, access, vector, fingerprint, QUESTION_VECTOR_FETCH, access.questions)
    for question_id, similarity in nearest:
        row = index.questions.row_of.get(question_id)
        if row is None or not access.questions[row]:
            continue
        chunk_row = int(index.questions.chunk_rows[row])
        if chunk_row in seen:
            continue
        seen.add(chunk_row)
        hits.append(index.chunk_hit(chunk_row, QUESTION_VECTOR, similarity, question_row=row))
        if len(hits) >= VECTOR_TOP_K:
            break
    return hits


def tree_vector(
    index: RecallIndex, access: Access, vector: np.ndarray, fingerprint: str | None
) -> list[Hit]:
    """Rows of the tree vector table are keyed by `node_key`."""
    nearest = _nearest_rows(index.tree_vectors, index.tree.row_of, access.tree, access, vector, fingerprint)
    return [index.tree_hit(row, TREE_VECTOR, similarity) for row, similarity in nearest]
