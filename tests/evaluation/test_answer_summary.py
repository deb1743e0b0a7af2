"""The answer figures against hand-computed values: a quoted sentence holding the gold answer counts."""

from __future__ import annotations

from petrichor.evaluation.answers import AnswerOutcome, Quote, answer_contains, summarise_answers
from petrichor.evaluation.dataset import EvalQuestion
from petrichor.evaluation.scoring import Scorer


def test_answer_contains_ignores_markers_punctuation_and_case():
    assert answer_contains("该校面积约 3000 平方米 [1]。", ("3000平方米",), "zh")
    assert answer_contains("The capital is Ulaanbaatar [1].", ("ulaanbaatar",), "en")
    assert not answer_contains("面积很大 [1]", ("3000平方米",), "zh")
    assert not answer_contains("anything", ("", "  "), "en")  # an empty gold answer is no answer


def test_an_english_short_answer_is_held_as_whole_words():
    assert answer_contains("No — the report says otherwise [1].", ("no",), "en")
    assert not answer_contains("It is not known; the economy grew now [1].", ("no",), "en")
    assert not answer_contains("Their eyes met.", ("Yes",), "en")
    assert answer_contains("Sam Bankman-Fried said so.", ("Sam Bankman-Fried",), "en")


def test_summary_reports_the_share_of_answers_holding_a_gold_answer():
    questions = [
        EvalQuestion("q1", "嘉诺撒圣家学校的面积是多大？", ("d1",), answers_all=("3000平方米",), lang="zh"),
        EvalQuestion("q2", "学校哪年创办？", ("d1",), answers_all=("1900年", "1900"), lang="zh"),
        EvalQuestion("q3", "学校在哪里？", ("d2",), answers_all=("九龙",), lang="zh"),
        EvalQuestion("q4", "What does it cover?", ("d3",), lang="en"),  # free-text answer only: not counted
    ]
    outcomes = [
        AnswerOutcome("q1", "学校占地3000平方米。[1]", (Quote("学校占地3000平方米。", "d1"),), 1.0),
        AnswerOutcome("q2", "学校创办于1900年[1][2]", (Quote("学校创办于1900年", "d1"), Quote("学校很有名", "d9")), 1.0),
        AnswerOutcome("q3", "没有找到。", (), 1.0),
        AnswerOutcome("q4", "It covers setup. [1]", (Quote("It covers setup.", "d3"),), 1.0),
    ]
    summary = summarise_answers(questions, outcomes, Scorer(questions))
    assert summary["answer_contains_gold"] == round(2 / 3, 4)
    assert summary["exact_match"] == 0.0
    assert summary["citation_precision"] == round(2 / 4, 4)  # q4's quote has no gold answer or passage
    assert summary["citation_doc_precision"] == round(3 / 4, 4)
    assert summary["citations_per_answer"] == 1.0
