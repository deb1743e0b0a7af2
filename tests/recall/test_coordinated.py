"""Coordinated values (`recall.coordinated`): values of one kind joined by a conjunction are searched each on
its own; anything else is searched as asked."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from petrichor_serving.recall.coordinated import coordinated_queries
from petrichor_serving.recall.query import Query
from petrichor_serving.recall.rewrite import build_queries


@pytest.mark.parametrize(
    "question,expected",
    [
        ("2022年和2023年春运首日火车票的时间", ["2022年春运首日火车票的时间", "2023年春运首日火车票的时间"]),
        ("上海和北京2021年的GDP分别是多少？", ["上海2021年的GDP是多少？", "北京2021年的GDP是多少？"]),
        ("2022年澳网男单和女单冠军分别是谁？", ["2022年澳网男单冠军是谁？", "2022年澳网女单冠军是谁？"]),
        ("《人世间》的导演和编剧是谁？", ["《人世间》的导演是谁？", "《人世间》的编剧是谁？"]),
        ("速度与激情10内地和北美的上映时间", ["速度与激情10内地的上映时间", "速度与激情10北美的上映时间"]),
        ("2021年香港、澳门的GDP增长率", ["2021年香港的GDP增长率", "2021年澳门的GDP增长率"]),
        ("Did the Verge and the Guardian both report it?", ["Did the Verge both report it?", "Did the Guardian both report it?"]),
    ],
)
def test_each_coordinated_value_is_searched_without_the_others(question: str, expected: list[str]) -> None:
    assert coordinated_queries(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "研究与开发投入占比是多少",  # 与 read as a preposition: one thing
        "2021年的GDP与2020年相比增长了多少",  # a word stands between the years
        "Does the Fortune article claim this while the TechCrunch article does not?",
        "How many snapshots are kept?",
    ],
)
def test_a_question_without_coordinated_values_is_searched_as_asked(question: str) -> None:
    assert coordinated_queries(question) == []
    assert build_queries(Query.of(question), coordinated=True) == [question]


def test_the_callers_sub_queries_win_and_the_switch_turns_it_off() -> None:
    question = Query.of("2022年和2023年超级碗冠军是谁")
    assert build_queries(question, coordinated=True)[1:] == ["2022年超级碗冠军是谁", "2023年超级碗冠军是谁"]
    assert build_queries(question, ["超级碗"], coordinated=True) == [question, "超级碗"]
    assert build_queries(question, coordinated=False) == [question]


def _subsequence(short: str, long: str) -> bool:
    rest = iter(long)
    return all(c in rest for c in short)


@given(st.text(alphabet="2023年和与、北京上海 AndBorGuardianthe", max_size=40))
def test_a_sub_query_is_the_question_with_the_other_values_left_out(text: str) -> None:
    for query in coordinated_queries(text):
        assert len(query) < len(text.strip()) and _subsequence(query, text)
