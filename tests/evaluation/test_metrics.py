"""Metric functions against hand-computed values, and their properties over generated rankings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from petrichor.evaluation.metrics import (
    GoldPassage,
    cover_rank,
    dedupe,
    doc_hit_rank,
    exact_match,
    first_hit_rank,
    group_hit_rank,
    normalize_answer,
    percentile,
    quote_supports,
    recall_at,
    reciprocal_rank,
    section_hit,
    shingles,
    token_f1,
)


def test_chunk_hits_become_ranked_documents():
    assert dedupe(["b", "a", "b", None, "c", "a"]) == ["b", "a", "c"]


@pytest.mark.parametrize(
    ("ranked", "gold", "match", "rank"),
    [
        (["x", "g", "y"], ["g"], "any", 2),
        (["x", "g2", "g1"], ["g1", "g2"], "any", 2),
        (["x", "g2", "y", "g1"], ["g1", "g2"], "all", 4),  # the last gold document decides
        (["x", "g2"], ["g1", "g2"], "all", None),
        (["x", "y"], ["g"], "any", None),
        (["x"], [], "any", None),
    ],
)
def test_doc_hit_rank(ranked, gold, match, rank):
    assert doc_hit_rank(ranked, gold, match) == rank


def test_group_hit_rank_needs_one_document_of_every_group():
    groups = [["a1", "a2"], ["b1"]]
    assert group_hit_rank(["a2", "x", "a1", "b1"], groups) == 4
    assert group_hit_rank(["b1", "a1"], groups) == 2
    assert group_hit_rank(["a1", "a2", "x"], groups) is None
    assert group_hit_rank(["a1"], []) is None
    # a document in two groups covers both
    assert group_hit_rank(["x", "ab"], [["ab", "a"], ["ab", "b"]]) == 2


def test_cover_rank_counts_the_groups_seen_so_far():
    assert cover_rank([set(), {1}, {0, 1}], 2) == 3
    assert cover_rank([{0, 1}], 2) == 1
    assert cover_rank([{0}, {0}], 2) is None
    assert cover_rank([{5}], 1) is None  # out-of-range groups count for nothing
    assert cover_rank([], 0) is None


def test_recall_and_reciprocal_rank():
    # ranks 1, 3, 7, miss: R@1 = 1/4, R@5 = 2/4, R@10 = 3/4, MRR@10 = (1 + 1/3 + 1/7) / 4
    ranks = [1, 3, 7, None]
    assert [sum(recall_at(r, k) for r in ranks) / 4 for k in (1, 5, 10)] == [0.25, 0.5, 0.75]
    assert sum(reciprocal_rank(r, 10) for r in ranks) / 4 == pytest.approx((1 + 1 / 3 + 1 / 7) / 4)
    assert reciprocal_rank(11, 10) == 0.0
    assert first_hit_rank([False, False, True, True]) == 3 and first_hit_rank([False]) is None


def test_chinese_passage_is_a_whitespace_insensitive_substring():
    gold = GoldPassage.of("学校的面积为3000平方米，设有18个课室。", "zh")
    assert gold.found_in("简介。学校的面积为 3000 平方米，\n设有18个课室。其他内容")
    assert not gold.found_in("学校的面积为3000平方米。")


def test_english_passage_needs_half_of_its_six_word_shingles():
    passage = "one two three four five six seven eight"  # 3 shingles: 1-6, 2-7, 3-8
    assert len(shingles(passage)) == 3
    gold = GoldPassage.of(passage, "en")
    assert gold.found_in("ONE two, three-four five six seven!")  # 1-6 and 2-7: 2 of 3
    assert not gold.found_in("zero one two three four five six")  # only 1-6: 1 of 3
    assert GoldPassage.of("too short", "en").found_in("this is too short indeed")  # one shingle of 2 words
    assert not GoldPassage.of("", "en").found_in("anything")


def test_section_hit_matches_the_end_of_the_heading_path_in_the_same_document():
    sections = [("guide", ("Installing", "On OpenShift"))]
    assert section_hit("guide", ("Guide", "Installing", "On OpenShift"), sections)
    assert not section_hit("other", ("Guide", "Installing", "On OpenShift"), sections)
    assert not section_hit("guide", ("Installing",), sections)
    assert not section_hit("guide", ("On OpenShift", "Installing"), sections)


def test_answer_normalisation():
    assert normalize_answer("The  Quick, brown fox!", "en") == "quick brown fox"
    assert normalize_answer("3000 平方米。", "zh") == "3000平方米"


def test_exact_match_and_f1():
    assert exact_match("the Eiffel Tower.", ["Eiffel tower"], "en") == 1.0
    assert exact_match("Tower", ["Eiffel tower"], "en") == 0.0
    # words: pred {paris, france} vs gold {paris}: P = 1/2, R = 1 -> F1 = 2/3
    assert token_f1("Paris, France", ["Paris"], "en") == pytest.approx(2 / 3)
    # characters: pred 文穆公 vs gold 文穆: P = 2/3, R = 1 -> F1 = 0.8; the best answer wins
    assert token_f1("文穆公", ["文忠", "文穆"], "zh") == pytest.approx(0.8)
    assert token_f1("无关", ["文穆"], "zh") == 0.0


def test_quote_supports_by_answer_or_passage():
    gold = [GoldPassage.of("乾隆四年以87岁高龄去世，加太傅，谥文穆。", "zh")]
    assert quote_supports("谥文穆。", gold, ["文穆"], "zh")
    assert quote_supports("前文。乾隆四年以87岁高龄去世，加太傅，谥文穆。", gold, [], "zh")
    assert not quote_supports("加太傅。", gold, ["文穆"], "zh")


def test_percentile_interpolates():
    assert percentile([10, 20, 30, 40], 50) == 25.0
    assert percentile([], 50) is None


DOC_IDS = st.sampled_from([f"d{i}" for i in range(8)])
RANKINGS = st.lists(DOC_IDS, max_size=12).map(dedupe)
RANKS = st.one_of(st.none(), st.integers(min_value=1, max_value=30))


@given(RANKS, st.integers(min_value=1, max_value=20), st.integers(min_value=0, max_value=20))
def test_recall_at_k_is_monotone_in_k(rank, k, more):
    assert recall_at(rank, k) <= recall_at(rank, k + more)
    assert reciprocal_rank(rank, k) <= reciprocal_rank(rank, k + more) <= recall_at(rank, k + more)


@given(RANKINGS, st.lists(st.lists(DOC_IDS, min_size=1, max_size=3), min_size=1, max_size=4))
def test_all_gold_is_never_easier_than_one_gold(ranked, groups):
    all_rank = group_hit_rank(ranked, groups)
    any_rank = doc_hit_rank(ranked, [d for g in groups for d in g])
    if all_rank is not None:
        assert any_rank is not None and any_rank <= all_rank <= len(ranked)
        assert set(ranked[all_rank - 1]) and any(ranked[all_rank - 1] in g for g in groups)
        # the ranking cut at that rank covers every group, one rank earlier it does not
        assert all(set(g) & set(ranked[:all_rank]) for g in groups)
        assert not all(set(g) & set(ranked[: all_rank - 1]) for g in groups)


@given(RANKINGS, st.lists(DOC_IDS, min_size=1, max_size=4))
def test_gold_match_all_is_groups_of_one(ranked, gold):
    assert doc_hit_rank(ranked, gold, "all") == group_hit_rank(ranked, [[g] for g in dict.fromkeys(gold)])
    assert doc_hit_rank(ranked, gold, "any") == group_hit_rank(ranked, [gold])


@given(RANKINGS, st.lists(DOC_IDS, min_size=1, max_size=4), DOC_IDS)
def test_appending_a_document_never_loses_a_hit(ranked, gold, extra):
    before = doc_hit_rank(ranked, gold, "all")
    after = doc_hit_rank(dedupe([*ranked, extra]), gold, "all")
    assert before is None or after == before
