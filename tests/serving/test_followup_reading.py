"""How a follow-up is recognised and what of the previous answer locates its evidence, without a built corpus.

Anaphors are a closed grammatical class, but three of its words do other work too: English "that" joins
clauses, "it" stands in for a subject in "is it possible to…", and 该 means "should" before a verb. The
previous answer's quoted text is found again between its `[n]` markers, its short lead-in aside.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_serving.agent import followup


@pytest.mark.parametrize(
    "question,word",
    [
        ("How do I change that?", "that"),
        ("What does that mean?", "that"),
        ("Is that setting per tenant?", "that"),
        ("What is its default constant?", "its"),
        ("Can they be revoked?", "they"),
        ("它的常数默认是多少？", "它"),
        ("这个上限用哪个变量设置？", "这个"),
        ("该参数默认是多少？", "该"),
    ],
)
def test_a_pronoun_or_demonstrative_points_back(question, word):
    assert followup.anaphor(question) == word


@pytest.mark.parametrize(
    "question",
    [
        "What is the setting that controls snapshots?",  # "that" joins a clause
        "Is it possible to keep more snapshots?",  # "it" holds a place
        "How long does it take to build the corpus?",
        "我该怎么配置 API 密钥？",  # 该: should
        "其他选项有哪些？",  # 其他 is a word of its own
        "How many snapshots are kept by default?",
    ],
)
def test_words_doing_other_work_do_not_point_back(question):
    assert followup.anaphor(question) is None


def test_the_previous_answers_quotes_are_found_without_their_lead_in_and_markers():
    answer = "5 个——默认保留最新的 5 个快照版本，可以通过 `PETRICHOR_KEEP_SNAPSHOTS` 修改。 [1]"
    assert followup._pieces(answer) == ["默认保留最新的 5 个快照版本，可以通过 `PETRICHOR_KEEP_SNAPSHOTS` 修改。"]
    answer = "60 — The default RRF constant is 60, and ranks start at 0: [1] RRF merges lists. Short. [2]"
    assert followup._pieces(answer) == ["The default RRF constant is 60, and ranks start at 0:", "RRF merges lists."]


def test_each_user_turn_is_paired_with_the_reply_that_follows_it():
    history = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": "  "},
        {"role": "user", "content": "second"},
    ]
    assert followup._turns(history) == [("first", "one"), ("second", "")]
    assert followup._turns([{"role": "assistant", "content": "an answer with no question"}]) == []


_WORDS = st.sampled_from("how do I change that it this the snapshot key default keep set value 2021 它 这个 怎么 改 快照 默认".split())


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=8))
def test_an_anaphor_found_is_a_word_of_the_question(words):
    text = " ".join(words) + "?"
    found = followup.anaphor(text)
    assert found is None or (found in followup.ANAPHORS and found in text.lower())
