"""What the rerank knows of each candidate of one pool, as one feature row: the signals recall has already
computed, each scaled within the pool so that rows of different questions compare.

The hand-tuned rerank (`rerank.rerank`) adds some of these with fixed points; the learned ranker
(`ranker.py`) weighs all of them by a model fitted on the evaluation sets (`petrichor.evaluation.ranker_fit`),
and `petrichor eval --ranker-features FILE` logs the rows with their labels to fit it on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from petrichor_serving.recall import routes
from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.rerank import CONTENT_CHARS, best_sentence, dense_shares, fields

PoolRows = tuple[list[tuple[str | None, str | None]], list[list[float]]]
"""One rerank pool as logged: each hit's (article id, chunk id), and its feature row."""

_BASE = (
    "hand_score",
    "fused_share",
    "fused_position",
    "dense_share",
    "phrase_title",
    "phrase_summary",
    "phrase_content",
    "tokens_title",
    "tokens_summary",
    "tokens_content",
    "tokens_sentence",
    "route_share",
    "article_share",
    "article_first",
    "length",
)


def feature_names() -> tuple[str, ...]:
    """The columns of a row: the pool-level signals, then each registered route's presence and score share
    (read at call time, so a route added to the registry adds its two columns)."""
    per_route = tuple(f"{kind}:{r.name}" for r in routes.registered() for kind in ("found", "score"))
    return _BASE + per_route


def _share(value: float, low: float, high: float) -> float:
    return (value - low) / (high - low) if high > low else 1.0


def pool_features(
    hits: Sequence[Hit],
    query_norm: str,
    tokens: Sequence[str],
    weights: dict[str, float] | None,
    hand_scores: Sequence[float],
    dense_routes: Sequence[str],
    active_routes: int,
) -> list[list[float]]:
    """One row per hit of `hits` (a rerank pool, in the order the stage before left it), `feature_names()`
    columns: `hand_scores` are the hand-tuned rerank's scores of the same hits."""
    n = len(hits)
    if n == 0:
        return []
    weight = {t: 1.0 if weights is None else weights.get(t, 1.0) for t in tokens}
    total = sum(weight.values()) or 1.0
    fused = [h.score for h in hits]
    f_low, f_high = min(fused), max(fused)
    h_low, h_high = min(hand_scores), max(hand_scores)
    dense = dense_shares(hits, dense_routes)
    registered = [r.name for r in routes.registered()]
    route_high = {r: max((h.route_scores.get(r, 0.0) for h in hits), default=0.0) for r in registered}
    per_article: dict[str, int] = {}
    first_of_article: set[int] = set()
    for i, h in enumerate(hits):
        if h.article_key not in per_article:
            first_of_article.add(i)
        per_article[h.article_key] = per_article.get(h.article_key, 0) + 1
    rows = []
    for i, h in enumerate(hits):
        head = h.content[:CONTENT_CHARS]
        title, summary, content = fields(h.title, h.path, h.snippet, head)
        row = [
            _share(hand_scores[i], h_low, h_high),
            _share(h.score, f_low, f_high),
            i / n,
            dense[i],
            float(bool(query_norm) and query_norm in title),
            float(bool(query_norm) and query_norm in summary),
            float(bool(query_norm) and query_norm in content),
            sum(weight[t] for t in tokens if t in title) / total,
            sum(weight[t] for t in tokens if t in summary) / total,
            sum(weight[t] for t in tokens if t in content) / total,
            best_sentence(head, tokens, weights) / total if tokens else 0.0,
            len(h.routes) / max(active_routes, 1),
            per_article[h.article_key] / n,
            float(i in first_of_article),
            math.log1p(len(h.content)) / 10.0,
        ]
        for r in registered:
            found = r in h.route_scores
            row.append(float(found))
            row.append(h.route_scores[r] / route_high[r] if found and route_high[r] > 0 else 0.0)
        rows.append(row)
    return rows
