"""`naive_hybrid`: the bar Petrichor is measured against, the hybrid search a newcomer would write first.

The naive 512-code-point windows, ranked by two routes and fused by reciprocal rank:
- BM25 from the `bm25s` package (its defaults: Lucene scoring, k1 1.5, b 0.75) over `hybrid_tokens`:
  jieba's search-mode words for text with CJK characters, lower-cased `\\w+` words otherwise;
- dense: cosine similarity of the window vectors (passage mode) with the question's vector (query mode),
  the same embedder, vector cache and query vectors as `naive_vector`;
- RRF with k = 60 over each route's first 200 windows (1-based ranks); ties go to the earlier window.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence

import numpy as np

from petrichor.evaluation.baselines import NaiveChunk, NaiveVectorRetriever, top_indices
from petrichor.evaluation.retrieval import SEARCH_LIMIT, Ranking, Retrieved
from petrichor_core.text.lang import has_cjk, init_jieba

RRF_K = 60
ROUTE_DEPTH = 200
_WORD = re.compile(r"\w+")


def hybrid_tokens(text: str) -> list[str]:
    """jieba `lcut_for_search` words for CJK text, `\\w+` words otherwise; lower-cased, punctuation and
    whitespace dropped (a jieba piece keeps only its word characters, so latin words match either way)."""
    lowered = text.lower()
    if not has_cjk(lowered):
        return _WORD.findall(lowered)
    return [w for piece in init_jieba().lcut_for_search(lowered) for w in _WORD.findall(piece)]


def rrf_fuse(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[int]:
    """Items of several best-first rankings ordered by the sum of 1 / (k + rank), ranks from 1; ties keep
    the item seen first (earlier ranking, higher place)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: n for n, item in enumerate(scores)}
    return sorted(scores, key=lambda item: (-scores[item], order[item]))


class BM25sRoute:
    """A bm25s index over the windows' text."""

    def __init__(self, texts: Sequence[str]):
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG
        self.index = bm25s.BM25()
        self.index.index([hybrid_tokens(t) for t in texts], show_progress=False)

    def ranked(self, question: str, k: int) -> np.ndarray:
        """Window indices of the `k` best-scoring windows with a positive score, best first."""
        ids = self.index.get_tokens_ids(list(dict.fromkeys(hybrid_tokens(question))))
        if not ids:
            return np.empty(0, np.int64)
        scores = np.asarray(self.index.get_scores_from_ids(ids))
        top = top_indices(scores, k)
        return top[scores[top] > 0]


class NaiveHybridRetriever:
    """bm25s and dense routes over the naive windows, fused by RRF; latency includes the query embedding."""

    name = "naive_hybrid"

    def __init__(self, chunks: Sequence[NaiveChunk], dense: NaiveVectorRetriever, limit: int = SEARCH_LIMIT):
        self.chunks = list(chunks)
        self.dense = dense
        self.bm25 = BM25sRoute([c.text for c in self.chunks])
        self.limit = limit

    def retrieve(self, question: str) -> Ranking:
        query, embed_ms = self.dense.queries.get(question)
        started = time.perf_counter()
        routes = [self.bm25.ranked(question, ROUTE_DEPTH).tolist(), self.dense.ranked(query, ROUTE_DEPTH).tolist()]
        items = [self.chunks[i].retrieved() for i in rrf_fuse(routes)[: self.limit]]
        recall_ms = (time.perf_counter() - started) * 1000
        return Ranking(items, embed_ms + recall_ms, recall_ms)

    def all_chunks(self) -> list[Retrieved]:
        return [c.retrieved() for c in self.chunks]
