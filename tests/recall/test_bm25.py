import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_core.text.bm25 import FIELD_WEIGHTS, K1, B, BM25Index, row_sums, top_ranked
from petrichor_core.text.tokenize import index_tokens, query_tokens


def test_field_weights_reference_case():
    # field weights: doc1 wins on the title, both scores positive
    index = BM25Index.build([("Redis 消费幂等", "", "处理重复消费"), ("消息记录", "", "Redis 消费幂等 Redis 消费幂等")], index_tokens)
    assert index.lengths.tolist() == [17.0, 17.0]
    ranked = top_ranked(*index.score(query_tokens("Redis 消费幂等")), k=10)
    assert [r.row for r in ranked] == [0, 1]
    assert ranked[0].score == pytest.approx(1.243102, abs=1e-6)
    assert ranked[1].score == pytest.approx(1.041837, abs=1e-6)


def _corpus(seed: int, n: int) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    words = ["redis", "kafka", "持久化", "消费者", "集群", "故障", "恢复", "备份", "索引", "查询", "延迟"]
    pick = lambda k: " ".join(rng.choice(words, size=k))  # noqa: E731
    return [(pick(2), pick(3), pick(int(rng.integers(3, 30)))) for _ in range(n)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mask_equals_bm25_over_the_filtered_subset(seed):
    docs = _corpus(seed, 60)
    mask = np.random.default_rng(seed + 100).random(len(docs)) < 0.4
    full = BM25Index.build(docs, index_tokens)
    subset_rows = np.flatnonzero(mask)
    subset = BM25Index.build([docs[i] for i in subset_rows], index_tokens)
    terms = query_tokens("redis 持久化 故障恢复")

    rows, scores = full.score(terms, mask)
    sub_rows, sub_scores = subset.score(terms)
    assert rows.tolist() == subset_rows[sub_rows].tolist()
    np.testing.assert_allclose(scores, sub_scores, rtol=0, atol=1e-12)
    assert mask[rows].all()
    masked_top = top_ranked(rows, scores, 10)
    subset_top = top_ranked(sub_rows, sub_scores, 10)
    assert [r.row for r in masked_top] == [int(subset_rows[r.row]) for r in subset_top]
    assert [r.score for r in masked_top] == pytest.approx([r.score for r in subset_top])


def test_empty_mask_and_unknown_terms_score_nothing():
    index = BM25Index.build(_corpus(7, 10), index_tokens)
    assert len(index.score(["redis"], np.zeros(10, dtype=bool))[0]) == 0
    assert len(index.score(["unknown"])[0]) == 0
    assert BM25Index.build([], index_tokens).score(["redis"])[0].size == 0


def test_top_ranked_ties_by_row_and_one_per_group():
    rows = np.array([0, 1, 2, 3, 4, 5])
    scores = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 0.5])
    assert [r.row for r in top_ranked(rows, scores, 3)] == [1, 2, 4]
    groups = {0: "a", 1: "b", 2: "b", 3: "c", 4: "b", 5: "d"}
    assert [r.row for r in top_ranked(rows, scores, 3, group=groups.get)] == [1, 3, 0]
    assert [r.row for r in top_ranked(rows, scores, 10, group=groups.get)] == [1, 3, 0, 5]


@pytest.mark.parametrize("seed", [4, 5])
def test_top_equals_ranking_every_scored_row(seed):
    # enough rows for the block bound to prune; few words, so many rows tie at the cut
    docs = _corpus(seed, 3000)
    index = BM25Index.build(docs, index_tokens)
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 400, size=len(docs))
    for mask in (None, np.ones(len(docs), dtype=bool), rng.random(len(docs)) < 0.5, rng.random(len(docs)) < 0.01):
        for query in ("redis 持久化 故障恢复", "kafka", "集群 延迟 unknown"):
            terms = query_tokens(query)
            for k, group in ((0, None), (1, None), (10, None), (10, groups.__getitem__), (50, groups.__getitem__)):
                assert index.top(terms, k, mask, group) == top_ranked(*index.score(terms, mask), k, group)


def test_precomputed_term_scores_equal_the_formula_bit_for_bit():
    docs = _corpus(8, 200)
    index = BM25Index.build(docs, index_tokens)
    terms = query_tokens("redis 持久化 故障恢复")
    avg_len = index.lengths.sum() / index.size
    expected = np.zeros(index.size)
    for term in terms:
        rows, tf = index.postings(term)
        idf = math.log(1 + (index.size - len(rows) + 0.5) / (len(rows) + 0.5))
        tf = tf.astype(np.float64)
        expected[rows] += idf * (tf * (K1 + 1) / (tf + K1 * (1 - B + B * index.lengths[rows] / avg_len)))
    rows, scores = index.score(terms)
    assert rows.tolist() == np.flatnonzero(expected).tolist()
    assert scores.tolist() == expected[rows].tolist()
    assert index.score(terms, np.ones(index.size, dtype=bool))[1].tolist() == scores.tolist()


def test_idf_of_a_term_counts_the_rows_holding_it():
    from petrichor_core.text.bm25 import BM25Index, bm25_idf

    index = BM25Index.build([("a b", "", ""), ("a", "", ""), ("c", "", "")], str.split)
    assert index.idf("a") == bm25_idf(3, 2) < index.idf("c") == bm25_idf(3, 1) < index.idf("zzz") == bm25_idf(3, 0)


# ------------------------------------------------------------------------------ bm25s as the parity oracle

_WORDS = ["redis", "kafka", "持久化", "消费者", "集群", "故障", "恢复", "备份", "索引", "查询", "延迟", "wal"]
_field = st.lists(st.sampled_from(_WORDS), max_size=12).map(" ".join)


def _weighted_tokens(doc: tuple[str, str, str]) -> list[str]:
    """The token list our index counts for a document: each field's tokens repeated by its weight."""
    return [t for weight, text in zip(FIELD_WEIGHTS, doc) for t in index_tokens(text) * weight]


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.tuples(_field, _field, _field), min_size=1, max_size=25).filter(lambda ds: all(_weighted_tokens(d) for d in ds)),
    query=st.lists(st.sampled_from(_WORDS + ["absent"]), min_size=1, max_size=4),
)
def test_scores_match_bm25s_on_the_same_tokens(docs, query):
    """Ours is Lucene-variant BM25 (same IDF, k1, b) with the classic (k1 + 1) numerator, a constant factor."""
    bm25s = pytest.importorskip("bm25s")
    corpus = [_weighted_tokens(d) for d in docs]
    oracle = bm25s.BM25(k1=K1, b=B, method="lucene", dtype="float64")
    oracle.index(corpus, show_progress=False)
    terms = list(dict.fromkeys(t for word in query for t in query_tokens(word)))
    known = [t for t in terms if t in oracle.vocab_dict]
    expected = (K1 + 1) * oracle.get_scores(known) if known else np.zeros(len(docs))

    ours = BM25Index.build(docs, index_tokens).totals(terms)
    np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-12)


@given(st.lists(st.tuples(st.integers(0, 9), st.floats(0, 100, width=32)), max_size=40), st.sampled_from([np.int32, np.int64]))
def test_row_sums_are_each_rows_sum(pairs, row_type):
    """`row_sums` over int32 or int64 rows and float32 weights: each row's weights added in order, as float64."""
    rows = np.array([r for r, _ in pairs], dtype=row_type)
    weights = np.array([w for _, w in pairs], dtype=np.float32)
    expected = np.zeros(10)
    for r, w in zip(rows.tolist(), weights.tolist()):
        expected[r] += w
    got = row_sums(rows, weights, 10)
    assert got.dtype == np.float64 and got.tolist() == expected.tolist()
