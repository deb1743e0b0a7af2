"""Near-duplicate removal and the per-article cap.

Two hits are duplicates when their normalised titles are equal, or when the token sets of
title + snippet + the first 800 characters of content overlap by Jaccard >= 0.88. The same test and cap
apply when the list is backfilled up to `limit`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from petrichor_core.text.tokenize import token_set
from petrichor_serving.recall.balance import select_articles
from petrichor_serving.recall.config import DEFAULT_CONFIG
from petrichor_serving.recall.hits import Hit, normalize_knowledge_text

SIMILARITY_THRESHOLD = 0.88
"""Jaccard overlap of two hits' token sets at or above which they are near duplicates."""
_CONTENT_CHARS = 800
_FEATURE_CACHE_SIZE = 1024
"""Hit features kept by `_text_feature`: a set of at most ~1,100 tokens (title, a 220-code-point snippet
and 800 code points of content) takes 6 KB (English) to 25 KB (Chinese) on the dev sets, at most ~70 KB,
so the cache stays under ~25 MB on Chinese text and ~70 MB at worst."""


def _may_reach(a: int, b: int) -> bool:
    """Whether sets of `a` and `b` tokens can overlap by `SIMILARITY_THRESHOLD`: their Jaccard is at most
    min/max, so most pairs are told apart by size alone, without intersecting the sets."""
    return min(a, b) >= SIMILARITY_THRESHOLD * max(a, b)


@lru_cache(maxsize=_FEATURE_CACHE_SIZE)
def _text_feature(tokens_of: Callable[[str], frozenset], title: str, text: str) -> tuple[str, frozenset]:
    """A hit's normalised title and the token set of its title, snippet and content head. Cached, as
    `hits.knowledge_sentences` is: the same chunks come back search after search, a snapshot's texts never
    change, and the set is most of what the near-duplicate test costs (~80 µs for 700 Chinese code points,
    where a cached one costs a hash of its text)."""
    return normalize_knowledge_text(title), tokens_of(f"{title} {text}")


@dataclass
class DiverseSelection:
    """Grows a selection one hit at a time; each hit's title and token set are computed once."""

    limit: int
    max_per_article: int
    tokens_of: Callable[[str], frozenset] = token_set
    """The index tokenizer's `token_set`."""
    hits: list[Hit] = field(default_factory=list)
    dropped_keys: list[str] = field(default_factory=list)
    _features: list[tuple[str, frozenset]] = field(default_factory=list)
    _per_article: dict[str, int] = field(default_factory=dict)

    @property
    def full(self) -> bool:
        return len(self.hits) >= self.limit

    def _feature(self, hit: Hit) -> tuple[str, frozenset]:
        return _text_feature(self.tokens_of, hit.title, f"{hit.snippet} {hit.content[:_CONTENT_CHARS]}")

    def add(self, hit: Hit) -> bool:
        """Append `hit` unless its article is at the cap or it nearly duplicates a selected hit."""
        if self._per_article.get(hit.article_key, 0) >= self.max_per_article:
            return False
        title, tokens = self._feature(hit)
        size = len(tokens)
        for other_title, other_tokens in self._features:
            if title and title == other_title:
                return False
            if size and other_tokens and _may_reach(size, len(other_tokens)):
                shared = len(tokens & other_tokens)
                if shared / (size + len(other_tokens) - shared) >= SIMILARITY_THRESHOLD:
                    return False
        self.hits.append(hit)
        self._features.append((title, tokens))
        self._per_article[hit.article_key] = self._per_article.get(hit.article_key, 0) + 1
        return True


def select_diverse(
    reranked: Sequence[Hit],
    limit: int,
    max_per_article: int = DEFAULT_CONFIG.max_per_article,
    backfill: Sequence[Hit] = (),
    tokens_of: Callable[[str], frozenset] = token_set,
) -> DiverseSelection:
    """Take `reranked` in order (a rejected hit's key goes to `dropped_keys`), then top up from `backfill`
    (the article-stage candidates), skipping hits already selected; both passes stop at `limit`."""
    selection = DiverseSelection(limit, max_per_article, tokens_of)
    for hit in reranked:
        if selection.full:
            break
        if not selection.add(hit):
            selection.dropped_keys.append(hit.key)
    chosen = {h.key for h in selection.hits}
    for hit in backfill:
        if selection.full:
            break
        if hit.key not in chosen and selection.add(hit):
            chosen.add(hit.key)
    return selection


def fresh_tail(selected: Sequence[Hit], candidates: Sequence[Hit], limit: int, tail: int) -> list[Hit]:
    """The selection with its last `tail` of `limit` places given to the best `candidates` of articles not
    yet listed, one each (a question the first articles do not answer still finds its article in the list);
    places no new article fills go back to the selection's own hits, in order."""
    if tail <= 0:
        return list(selected)[:limit]
    head = list(selected)[: max(limit - tail, 0)]
    seen = {h.article_key for h in head}
    chosen = {h.key for h in head}
    for hit in candidates:
        if len(head) >= limit:
            break
        if hit.article_key not in seen and hit.key not in chosen:
            head.append(hit)
            seen.add(hit.article_key)
            chosen.add(hit.key)
    for hit in selected:
        if len(head) >= limit:
            break
        if hit.key not in chosen:
            head.append(hit)
            chosen.add(hit.key)
    return head


def tail_candidates(
    fused: Sequence[Hit],
    rank: Callable[[Sequence[Hit]], list[Hit]],
    articles: int = DEFAULT_CONFIG.tail_articles,
    rank_weights: Sequence[float] = DEFAULT_CONFIG.article_rank_weights,
) -> list[Hit]:
    """What `fresh_tail` draws from: the best hit of each of the first `articles` articles of `fused`, in
    `rank`'s order (the local rerank), then `fused` itself; `articles` 0: `fused` alone."""
    if articles <= 0:
        return list(fused)
    return [*rank(select_articles(fused, articles, 1, rank_weights).hits), *fused]
