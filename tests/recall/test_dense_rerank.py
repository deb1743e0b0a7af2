"""The rerank's dense share and the fresh tail of the result list."""

from functools import partial

import pytest

from petrichor_serving.recall.diversity import fresh_tail, tail_candidates
from petrichor_serving.recall.fusion import fuse
from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.rerank import dense_shares, rerank


def hit(chunk: int, route: str, score: float, *, article: int = 1, text: str = "") -> Hit:
    return Hit(
        kb_id="1",
        article_id=str(article),
        title="",
        path="",
        heading_path=(),
        snippet=text,
        content=text,
        score=score,
        routes=[route],
        chunk_id=str(chunk),
    )


def test_fusion_keeps_each_routes_best_score():
    fused = fuse(
        [
            [hit(1, "window_vector", 0.81), hit(2, "window_vector", 0.79)],
            [hit(2, "chunk_bm25", 7.5)],
            [hit(1, "window_vector", 0.86)],  # a sub-query's list of the same route
        ]
    )
    by_id = {h.chunk_id: h for h in fused}
    assert by_id["1"].route_scores == {"window_vector": 0.86}
    assert by_id["2"].route_scores == {"window_vector": 0.79, "chunk_bm25": 7.5}


def test_dense_shares_scale_to_the_pool_and_count_a_missing_cosine_as_worst():
    pool = fuse([[hit(1, "window_vector", 0.9), hit(2, "chunk_vector", 0.8), hit(3, "window_vector", 0.7)], [hit(4, "chunk_bm25", 3.0)]])
    shares = dict(zip((h.chunk_id for h in pool), dense_shares(pool, ["window_vector", "chunk_vector"])))
    assert shares == pytest.approx({"1": 1.0, "2": 0.5, "3": 0.0, "4": 0.0})
    assert dense_shares(pool, ["question_vector"]) == [0.0] * 4  # no route of that name: no dense evidence
    same = fuse([[hit(1, "window_vector", 0.8)], [hit(2, "window_vector", 0.8)]])
    assert dense_shares(same, ["window_vector"]) == [0.0, 0.0]


def test_dense_weight_lets_the_nearest_passage_win_a_lexical_tie():
    lexical = [hit(1, "chunk_bm25", 5.0, text="backup schedule"), hit(2, "chunk_bm25", 4.0, text="backup schedule")]
    dense = [hit(2, "window_vector", 0.92), hit(1, "window_vector", 0.70)]
    pool = fuse([lexical, dense])
    assert [h.chunk_id for h in rerank("backup schedule", pool)] == ["1", "2"]  # the fused prior decides
    ranked = rerank("backup schedule", pool, dense_weight=8.0, dense_routes=["window_vector"])
    assert [h.chunk_id for h in ranked] == ["2", "1"]
    assert ranked[0].rerank_score - ranked[1].rerank_score > 7  # 8 points for the best cosine, 0 for the worst


def test_fresh_tail_gives_the_last_places_to_unlisted_articles():
    selected = [hit(i, "chunk_bm25", 1.0, article=1 + i % 2) for i in range(6)]  # articles 1 and 2 only
    fused = [*selected, hit(10, "chunk_bm25", 0.5, article=3), hit(11, "chunk_bm25", 0.4, article=3), hit(12, "chunk_bm25", 0.3, article=4)]
    out = fresh_tail(selected, fused, limit=6, tail=3)
    assert [h.chunk_id for h in out] == ["0", "1", "2", "10", "12", "3"]  # one hit per new article, then back to the selection
    assert fresh_tail(selected, fused, limit=6, tail=0) == selected
    assert [h.chunk_id for h in fresh_tail(selected[:2], fused, limit=6, tail=10)] == ["0", "1", "10", "12"]  # all tail: one per article


def test_the_fresh_tail_takes_new_articles_in_the_reranks_order():
    head = [hit(0, "chunk_bm25", 1.0, article=1, text="backup schedule"), hit(1, "chunk_bm25", 0.9, article=1, text="backup schedule")]
    others = [  # fused order: articles 2, 3, 4, 5; only article 5 names both query words
        hit(2, "chunk_bm25", 0.8, article=2, text="restore"),
        hit(3, "chunk_bm25", 0.7, article=3, text="backup"),
        hit(4, "chunk_bm25", 0.6, article=3, text="schedule"),
        hit(5, "chunk_bm25", 0.5, article=4, text="cron"),
        hit(6, "chunk_bm25", 0.4, article=5, text="backup schedule"),
    ]
    fused = [*head, *others]
    rank = partial(rerank, "backup schedule", prior_weight=0.0)
    order = tail_candidates(fused, rank, articles=5)
    assert [h.chunk_id for h in fresh_tail(head, order, limit=4, tail=2)] == ["0", "1", "6", "3"]
    assert [h.chunk_id for h in fresh_tail(head, tail_candidates(fused, rank, articles=0), limit=4, tail=2)] == ["0", "1", "2", "3"]
    # an article beyond the first `articles` still fills a place, in fused order, after the reranked ones
    assert [h.chunk_id for h in fresh_tail(head, tail_candidates(fused, rank, articles=3), limit=6, tail=4)] == ["0", "1", "3", "2", "5", "6"]


def test_shared_field_points_score_a_hit_as_a_fresh_rerank_does():
    pool = fuse(
        [
            [hit(1, "chunk_bm25", 5.0, text="backup schedule"), hit(2, "chunk_bm25", 4.0, text="backup"), hit(3, "chunk_bm25", 3.0, text="restore")],
            [hit(2, "window_vector", 0.9), hit(3, "window_vector", 0.8)],
        ]
    )
    lexical: dict[str, float] = {}
    first = rerank("backup schedule", pool, dense_weight=8.0, dense_routes=["window_vector"], lexical=lexical)
    assert set(lexical) == {h.key for h in pool}
    # a second pool of one search: shared hits keep their field points, the prior and dense share follow the pool
    second_pool = [pool[1], pool[2], hit(4, "chunk_bm25", 0.001, text="backup schedule")]
    shared = rerank("backup schedule", second_pool, dense_weight=8.0, dense_routes=["window_vector"], lexical=lexical)
    fresh = rerank("backup schedule", second_pool, dense_weight=8.0, dense_routes=["window_vector"])
    assert [h.key for h in shared] == [h.key for h in fresh]
    assert [h.rerank_score for h in shared] == pytest.approx([h.rerank_score for h in fresh])
    assert {h.key: h.rerank_score for h in first} != {h.key: h.rerank_score for h in shared}
