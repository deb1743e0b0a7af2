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


def rerank_score(hit: Hit, index: int, query_norm: str, tokens: Sequence[str]) -> float:
    title = normalize_knowledge_text(hit.title)
    summary = normalize_knowledge_text(hit.path + " " + hit.snippet)
    content = normalize_knowledge_text(hit.content[:_CONTENT_CHARS])
    score = 1.0 / (index + 2)
    if query_norm:
        score += 8 * (query_norm in title) + 4 * (query_norm in summary) + 2 * (query_norm in content)
    for token in tokens:
        score += 4 * (token in title) + 2 * (token in summary) + (token in content)
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
    scored = [replace(h, rerank_score=rerank_score(h, i, query_norm, tokens)) for i, h in enumerate(hits)]
    return sorted(scored, key=lambda h: -h.rerank_score)
