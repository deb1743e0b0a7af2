"""Local rerank against the original question: no extra model call.

Sub-queries widen recall; the user's own question decides the order. A hit earns points where the whole
normalised question or its tokens occur, title above path/snippet above body, on top of a prior from the
fused score. Two changes from the reference, both measured with `petrichor eval` (docs/evaluation.md): the
prior is the fused score (scaled to the pool's range) rather than the list position, and each query token is weighted by its IDF over
the chunk index, so the words most questions of a manual share ("install", "Developer Hub") no longer
outvote the one word that names the feature. A third: the hit's cosine from the vector routes, scaled to the
pool's range, adds up to `RecallConfig.rerank_dense` points, so meaning counts where the words differ (a
typo, a paraphrase) without a model call: the vectors were computed by the routes already. A fourth: the
question's tokens that one sentence of the hit holds add `RecallConfig.rerank_sentence` points each
(`best_sentence`). Every weight is `RecallConfig`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from petrichor_core.text.tokenize import query_tokens
from petrichor_serving.recall.config import DEFAULT_CONFIG
from petrichor_serving.recall.hits import Hit, knowledge_sentences, normalize_knowledge_text

STRATEGY = "local"
CONTENT_CHARS = 1200
_FIELDS_CACHE_SIZE = 2048
"""Entries of `fields`: three normalised copies of at most ~1,500 code points, under ~20 MB in all."""


def best_sentence(content: str, tokens: Sequence[str], weights: dict[str, float] | None = None) -> float:
    """The largest weighted count of `tokens` (normalised, as the fields compare them) in one sentence of
    `content`."""
    joined, sentences = knowledge_sentences(content)
    present = {t: 1.0 if weights is None else weights.get(t, 1.0) for t in tokens if t in joined}
    if len(present) <= 1:  # one token (or none) is in one sentence wherever it is
        return sum(present.values())
    ceiling, best = sum(present.values()), 0.0
    for sentence in sentences:
        best = max(best, sum(w for t, w in present.items() if t in sentence))
        if best == ceiling:
            break
    return best


@lru_cache(maxsize=_FIELDS_CACHE_SIZE)
def fields(title: str, path: str, snippet: str, head: str) -> tuple[str, str, str]:
    """A hit's three compared fields, normalised: title, path + snippet, content head. Cached like
    `knowledge_sentences` (a snapshot's texts never change and the same chunks come back search after
    search); a hit's str fields come from the index's display cache, so their hashes are computed once."""
    content = knowledge_sentences(head)[0].replace("\n", "")  # normalised once, for both content fields
    return normalize_knowledge_text(title), normalize_knowledge_text(path + " " + snippet), content


def rerank_score(
    hit: Hit,
    index: int,
    query_norm: str,
    tokens: Sequence[str],
    prior: float | None = None,
    weights: dict[str, float] | None = None,
    sentence_weight: float = 0.0,
) -> float:
    """The reference's field scores; `prior` (points from the fused score) replaces its `1 / (index + 2)`
    order prior, `weights` scale each token's points (1 when absent) and `sentence_weight` adds points for
    the tokens of the best sentence (`best_sentence`)."""
    head = hit.content[:CONTENT_CHARS]
    title, summary, content = fields(hit.title, hit.path, hit.snippet, head)
    score = 1.0 / (index + 2) if prior is None else prior
    if query_norm:
        score += 8 * (query_norm in title) + 4 * (query_norm in summary) + 2 * (query_norm in content)
    for token in tokens:
        w = 1.0 if weights is None else weights.get(token, 1.0)
        score += w * (4 * (token in title) + 2 * (token in summary) + (token in content))
    if sentence_weight and tokens:
        score += sentence_weight * best_sentence(head, tokens, weights)
    return score


def idf_weights(tokens: Sequence[str], idf: Callable[[str], float]) -> dict[str, float]:
    """Each token's IDF (from the chunk index), scaled so the rarest query token weighs 1."""
    raw = {t: idf(t) for t in tokens}
    top = max(raw.values(), default=0.0)
    return {t: v / top if top > 0 else 1.0 for t, v in raw.items()}


def _share(score: float, low: float, best: float) -> float:
    return (score - low) / (best - low) if best > low else 1.0


def dense_shares(hits: Sequence[Hit], routes: Sequence[str]) -> list[float]:
    """Each hit's best cosine over the vector `routes`, scaled to the pool's range (best 1, worst 0); a hit
    no vector route found counts as the worst."""
    raw = [max((h.route_scores[r] for r in routes if r in h.route_scores), default=None) for h in hits]
    found = [v for v in raw if v is not None]
    if not found:
        return [0.0] * len(hits)
    hi, lo = max(found), min(found)
    return [0.0 if v is None or hi <= lo else (v - lo) / (hi - lo) for v in raw]


def rerank(
    query: str,
    hits: Sequence[Hit],
    tokenize: Callable[[str], list[str]] = query_tokens,
    token_weights: Callable[[Sequence[str]], dict[str, float]] | None = None,
    dense_weight: float = 0.0,
    dense_routes: Sequence[str] = (),
    prior_weight: float = DEFAULT_CONFIG.rerank_prior,
    prior_range: bool = True,
    sentence_weight: float = DEFAULT_CONFIG.rerank_sentence,
    lexical: dict[str, float] | None = None,
) -> list[Hit]:
    """The hits (at most `RecallConfig.rerank_top_k` are expected) with `rerank_score` set, best first; stable.
    A single hit is returned as is: there is nothing to reorder. `token_weights` (e.g. `idf_weights` over
    the corpus) weighs each token; without it every token weighs 1, as in the reference. `prior_range` False
    scales the fused prior to the best score's share instead of the pool's range. `lexical`, shared by the
    reranks of one search, keeps each hit's field and sentence points by key: they do not depend on the pool."""
    if len(hits) <= 1:
        return list(hits)
    query_norm = normalize_knowledge_text(query)
    tokens = [t for t in map(normalize_knowledge_text, tokenize(query)) if t]
    best = max(h.score for h in hits)
    low = min(h.score for h in hits) if prior_range else 0.0
    weights = token_weights(tokens) if token_weights is not None else None
    dense = dense_shares(hits, dense_routes) if dense_weight else [0.0] * len(hits)
    lexical = {} if lexical is None else lexical
    scored = []
    for h, d in zip(hits, dense):
        if h.key not in lexical:
            lexical[h.key] = rerank_score(h, 0, query_norm, tokens, 0.0, weights, sentence_weight)
        entry = h.copy()
        entry.rerank_score = lexical[h.key] + prior_weight * _share(h.score, low, best) + dense_weight * d
        scored.append(entry)
    return sorted(scored, key=lambda h: -(h.rerank_score or 0.0))  # set on every entry above
