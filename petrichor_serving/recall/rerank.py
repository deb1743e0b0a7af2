"""Local rerank against the original question (reference §6.6): no extra model call.

Sub-queries widen recall; the user's own question decides the order. A hit earns points where the whole
normalised question or its tokens occur, title above path/snippet above body, on top of a small prior that
keeps the fused order among equals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from petrichor_pipeline.text.tokenize import query_tokens
from petrichor_serving.recall.hits import Hit, normalize_knowledge_text

RERANK_TOP_K = 10
STRATEGY = "local"
_CONTENT_CHARS = 1200


FUSED_PRIOR = 4.0
"""Weight of the hit's fused (RRF) score, scaled to the best hit's: as much as one title-token match."""
COMMON_TOKEN_WEIGHT = 0.25
"""A query token found in most candidates' titles ("install", "configure") says little about which one fits."""


def rerank_score(
    hit: Hit, index: int, query_norm: str, tokens: Sequence[str], prior: float | None = None, weights: dict[str, float] | None = None
) -> float:
    """The reference's field scores; `prior` (fused score share) replaces its `1 / (index + 2)` order prior
    and `weights` damp tokens common to most candidates (measured on rhdh_docs_en: see docs/evaluation.md)."""
    title = normalize_knowledge_text(hit.title)
    summary = normalize_knowledge_text(hit.path + " " + hit.snippet)
    content = normalize_knowledge_text(hit.content[:_CONTENT_CHARS])
    score = 1.0 / (index + 2) if prior is None else FUSED_PRIOR * prior
    if query_norm:
        score += 8 * (query_norm in title) + 4 * (query_norm in summary) + 2 * (query_norm in content)
    for token in tokens:
        w = 1.0 if weights is None else weights.get(token, 1.0)
        score += w * (4 * (token in title) + 2 * (token in summary) + (token in content))
    return score


def rerank(
    query: str, hits: Sequence[Hit], tokenize: Callable[[str], list[str]] = query_tokens
) -> list[Hit]:
    """The hits (at most `RERANK_TOP_K` are expected) with `rerank_score` set, best first; stable.
    A single hit is returned as is: there is nothing to reorder."""
    if len(hits) <= 1:
        return list(hits)
    query_norm = normalize_knowledge_text(query)
    tokens = [t for t in map(normalize_knowledge_text, tokenize(query)) if t]
    best = max(h.score for h in hits)
    titles = [normalize_knowledge_text(h.title) for h in hits]
    weights = {t: COMMON_TOKEN_WEIGHT if 2 * sum(t in title for title in titles) > len(titles) else 1.0 for t in tokens}
    scored = [
        replace(h, rerank_score=rerank_score(h, i, query_norm, tokens, h.score / best if best > 0 else None, weights))
        for i, h in enumerate(hits)
    ]
    return sorted(scored, key=lambda h: -h.rerank_score)
