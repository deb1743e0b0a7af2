"""Short-answer metrics: CMRC 2018's official EM and F1, the lead-in read off an answer, wrong lead-ins, reference F1."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from petrichor.evaluation.answers import AnswerOutcome, Quote, lead_in, lead_in_right, summarise_answers
from petrichor.evaluation.dataset import EvalQuestion
from petrichor.evaluation.metrics import cmrc_exact_match, cmrc_f1, cmrc_segments
from petrichor.evaluation.scoring import Scorer


def test_cmrc_segments_split_han_characters_and_keep_latin_words():
    assert cmrc_segments("2009年5月号的《Comic Blade》") == ["2009", "年", "5", "月", "号", "的", "comic", "blade"]


def test_cmrc_exact_match_removes_its_punctuation_only():
    assert cmrc_exact_match("《勘太郎篇》", ["勘太郎篇"]) == 1.0
    assert cmrc_exact_match("勘太郎篇。", ["勘太郎篇"]) == 1.0
    assert cmrc_exact_match("是勘太郎篇", ["勘太郎篇"]) == 0.0


def test_cmrc_f1_is_over_the_longest_common_run():
    # gold 4 characters, prediction 6 holding them in a run: P = 4/6, R = 1
    assert round(cmrc_f1("进入勘太郎篇", ["勘太郎篇"]), 4) == round(2 * (4 / 6) / (4 / 6 + 1), 4)
    # the same characters out of order share a run of one only, not a bag of four
    assert cmrc_f1("篇郎太勘", ["勘太郎篇"]) == 0.25
    assert cmrc_f1("无关", ["勘太郎篇"]) == 0.0
    assert cmrc_f1("3000平方米", ["三千平方米", "3000平方米"]) == 1.0


@given(st.text(alphabet="勘太郎篇甲乙丙abc 12，。", min_size=1, max_size=12))
def test_cmrc_scores_stay_in_range_and_a_copy_scores_one(text):
    f1 = cmrc_f1(text, ["勘太郎篇"])
    assert 0.0 <= f1 <= 1.0
    if cmrc_segments(text):
        assert cmrc_f1(text, [text]) == 1.0 and cmrc_exact_match(text, [text]) == 1.0


def test_lead_in_is_the_short_answer_before_the_separator():
    assert lead_in("1843年——他于1843年出生。[1]", "他于1843年出生。", "zh") == "1843年"
    assert lead_in("4 — Petrichor keeps four snapshots. [1]", "Petrichor keeps four snapshots.", "en") == "4"
    # a quote that itself holds the separator is no lead-in
    assert lead_in("Sentinel — the watchdog — elects a primary [1]", "Sentinel — the watchdog — elects a primary", "en") is None
    assert lead_in("他于1843年出生。[1]", "他于1843年出生。", "zh") is None


def test_lead_in_right_holds_or_lies_inside_the_gold():
    assert lead_in_right("2023年1月7日", ["1月7日"], "zh")
    assert lead_in_right("四", ["四次"], "zh")
    assert not lead_in_right("2022年", ["2021年"], "zh")
    assert not lead_in_right("four", ["five", "5"], "en")


def test_summary_scores_the_lead_in_where_there_is_one_and_counts_wrong_ones():
    questions = [
        EvalQuestion("a", "哪一年？", ("d",), answers_all=("1843年",), lang="zh"),
        EvalQuestion("b", "几项？", ("d",), answers_all=("五项",), lang="zh"),
        EvalQuestion("c", "谁？", ("d",), answers_all=("马齐",), lang="zh"),
        EvalQuestion("e", "How do I create a key?", ("d",), answer="Generate a random key and store its hash.", lang="en"),
    ]
    outcomes = [
        AnswerOutcome("a", "1843年——他于1843年出生。[1]", (Quote("他于1843年出生。", "d"),), 1.0, lead_in="1843年"),
        AnswerOutcome("b", "七项——共有七项。[1]", (Quote("共有七项。", "d"),), 1.0, lead_in="七项"),
        AnswerOutcome("c", "马齐是清朝大臣。[1]", (Quote("马齐是清朝大臣。", "d"),), 1.0),
        AnswerOutcome("e", "Generate a random key, then store its hash. [1]", (Quote("x", "d"),), 1.0),
    ]
    s = summarise_answers(questions, outcomes, Scorer(questions))
    assert s["short_answer_questions"] == 3
    assert s["short_exact_match"] == round(1 / 3, 4)  # the right lead-in only
    assert s["lead_ins"] == round(2 / 3, 4)
    assert s["wrong_lead_ins"] == round(1 / 3, 4)
    assert s["reference_questions"] == 1 and 0.5 < s["reference_f1"] < 1.0
