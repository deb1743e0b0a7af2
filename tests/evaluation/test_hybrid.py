"""naive_hybrid: its tokens, reciprocal rank fusion, the bm25s route, and vectors shared with naive_vector."""

from __future__ import annotations

import pytest

from petrichor.evaluation.baselines import NaiveVectorRetriever, QueryEmbeddings, chunk_corpus, embed_chunks
from petrichor.evaluation.dataset import EvalDoc
from petrichor.evaluation.hybrid import BM25sRoute, NaiveHybridRetriever, hybrid_tokens, rrf_fuse
from tests.evaluation.test_baselines import CountingEmbedder


def test_tokens_are_jieba_search_words_for_cjk_text_and_lowercased_words_otherwise():
    assert hybrid_tokens("Self-hosted Redis, v7.2!") == ["self", "hosted", "redis", "v7", "2"]
    zh = hybrid_tokens("马齐去世后的谥号，Redis")
    assert "谥号" in zh and "马齐" in zh and "redis" in zh and "，" not in zh
    assert hybrid_tokens("  ") == []


def test_rrf_sums_reciprocal_ranks_from_one_with_k_60():
    # item 1: 1/62 + 1/61; item 3: 1/61; item 4: 1/62; item 2: 1/63
    assert rrf_fuse([[3, 1, 2], [1, 4]]) == [1, 3, 4, 2]
    # a tie keeps the item seen first
    assert rrf_fuse([[5], [6]]) == [5, 6] and rrf_fuse([[6], [5]]) == [6, 5]
    assert rrf_fuse([[], []]) == []
    assert rrf_fuse([[1, 2]], k=0) == [1, 2]


def test_bm25s_route_keeps_positive_scores_only():
    route = BM25sRoute(["redis sentinel failover", "kafka consumer groups", "", "马齐去世后谥号文穆"])
    assert route.ranked("Sentinel failover?", 200).tolist() == [0]
    assert route.ranked("马齐的谥号", 200).tolist() == [3]
    assert route.ranked("nothing here", 200).tolist() == []


DOCS = [
    EvalDoc("redis", "R", "Redis Sentinel elects a new primary after a failover. " + "a" * 40),
    EvalDoc("kafka", "K", "Kafka consumer groups read each partition once. " + "b" * 40),
    EvalDoc("zh", "Z", "马齐去世后谥号文穆。" + "c" * 40),
]


def test_hybrid_fuses_both_routes_and_embeds_each_question_once(tmp_path):
    chunks = chunk_corpus(DOCS)
    embedder = CountingEmbedder()
    queries = QueryEmbeddings(embedder)
    dense = NaiveVectorRetriever(chunks, embed_chunks(chunks, embedder, tmp_path), queries)
    hybrid = NaiveHybridRetriever(chunks, dense)
    # BM25 prefers kafka by its words, dense prefers redis by its letters: fusion keeps both on top
    ranking = hybrid.retrieve("kafka partition aaaa")
    assert {i.doc_id for i in ranking.items[:2]} == {"kafka", "redis"} and len(ranking.items) == 3
    assert ranking.latency_ms >= ranking.recall_ms >= 0
    dense.retrieve("kafka partition aaaa")
    assert embedder.queries == 1
    assert embedder.embedded == len(chunks)


def test_query_embeddings_count_their_time_for_every_user():
    queries = QueryEmbeddings(CountingEmbedder())
    first, ms = queries.get("abc")
    again, ms_again = queries.get("abc")
    assert first is again and ms == ms_again >= 0
    assert float((first**2).sum()) == pytest.approx(1.0)
