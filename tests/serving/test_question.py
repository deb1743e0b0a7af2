"""The question record: read once, deterministic, every constraint in the user's own words, and checked
against a unit's text by value (years, dates, numbers with units, names, quoted terms) in both languages."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_serving.agent import question as qmod
from petrichor_serving.agent.question import check, cn_number, holds_asked, meets, parse
from petrichor_serving.agent.router import QuestionClass


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(c.kind, c.surface) for c in parse(text).constraints]


@pytest.mark.parametrize(
    "text,value",
    [("十三", 13), ("二〇二一", 2021), ("两千零二十一", 2021), ("一万四", 14000), ("三", 3), ("一百零五", 105), ("十", 10)],
)
def test_chinese_numerals_have_their_values(text, value):
    assert cn_number(text) == value


def test_the_record_holds_language_words_kind_and_constraints():
    q = parse("2021年北京大兴机场年旅客吞吐量")
    assert q.language == "zh" and q.script == "cjk" and q.intent is QuestionClass.FACT
    assert ("year", "2021年") in _kinds(q.text) and ("entity", "北京") in _kinds(q.text)
    assert "机场" in q.keys
    q = parse("How much does a Petrichor licence cost per year?")
    assert q.language == "en" and q.asked == "money" and ("entity", "Petrichor") in _kinds(q.text)
    # the words keep the user's surface beside the matching key
    q = parse("Which series considers the ranking?")
    assert {(w.surface, w.key) for w in q.words} >= {("series", "seri"), ("considers", "consider")}


@pytest.mark.parametrize(
    "text,kind,surface",
    [
        ("2022春运开始时间", "year", "2022"),
        ("What happened in 2019 to FTX?", "year", "2019"),
        ("2022年1月5日全国新增确诊病例数？", "date", "2022年1月5日"),
        ("What was announced on January 5 by Apple?", "date", "January 5"),
        ("印度第三艘“歼敌者”级核潜艇下水的时间", "number", "第三艘"),
        ("Does the cache hold 512 windows per article?", "number", "512 windows"),
        ("iPhone SE 3的起售价是多少？", "entity", "iPhone SE 3"),
        ("Which company did Sam Bankman-Fried found?", "entity", "Sam Bankman-Fried"),
        ("《李茂扮太子》是什么类型的电影", "quoted", "李茂扮太子"),
        ('What does "publish_after_build" do?', "quoted", "publish_after_build"),
    ],
)
def test_each_constraint_kind_is_read_in_both_languages(text, kind, surface):
    assert (kind, surface) in _kinds(text)


@pytest.mark.parametrize(
    "text,unit,status",
    [
        ("2022春运开始时间", "2022年春运1月17日开始", "met"),
        ("2022春运开始时间", "2023年春运1月7日开始", "conflict"),
        ("2022春运开始时间", "春运期间铁路客流", "absent"),
        ("In 2019, what did FTX launch?", "FTX launched its exchange in May 2019.", "met"),
        ("In 2019, what did FTX launch?", "FTX collapsed in 2022.", "conflict"),
        ("印度第三艘核潜艇", "印度第3艘核潜艇下水", "met"),
        ("印度第三艘核潜艇", "印度第二艘核潜艇下水", "conflict"),
        ("北京冬奥会志愿者1.4万人", "志愿者共计14000人", "met"),
        ("2022年1月5日新增病例", "1月5日新增确诊189例", "met"),
        ("2022年1月5日新增病例", "1月6日新增确诊200例", "conflict"),
        ("What did Sam Bankman-Fried say?", "Sam Bankman Fried said nothing.", "met"),
        ("What did Sam Bankman-Fried say?", "Caroline Ellison said nothing.", "absent"),
    ],
)
def test_constraints_are_met_by_value_and_a_different_value_is_a_conflict(text, unit, status):
    first = next(c for c in parse(text).constraints if c.kind != "entity" or len(parse(text).constraints) == 1)
    assert meets(first, unit) == status


def test_the_check_names_the_failed_constraint_in_the_user_s_words():
    q = parse("2021年北京大兴机场年旅客吞吐量")
    found = check(q, ["2020年北京大兴国际机场旅客吞吐量1609万人次，2023年将恢复。"])
    assert found.reason() == "the question asks about 2021年; the evidence speaks of 2020 and 2023"
    assert check(q, ["上海浦东机场2021年旅客吞吐量"]).reason() == "the question names 北京; the cited evidence does not"
    assert check(q, ["2021年，北京大兴国际机场旅客吞吐量2505万人次"]).reason() is None


@pytest.mark.parametrize(
    "text,unit,held",
    [
        ("iPhone SE 3的起售价是多少？", "iPhone SE 3起售价3499元", True),
        ("iPhone SE 3的起售价是多少？", "iPhone SE 3于3月发布", False),
        ("How much does the licence cost?", "The licence costs $49 a year.", True),
        ("How much does the licence cost?", "The licence is granted per seat.", False),
        ("Which version added the gate?", "Version 1.8 added the gate.", True),
        ("谁是北京冬奥会第一棒火炬手", "第一棒火炬手是罗致焕", True),
        ("What is reciprocal rank fusion?", "anything", None),
    ],
)
def test_the_asked_answer_kind_is_held_or_not(text, unit, held):
    assert holds_asked(parse(text), unit) is held


_TEXT = st.text(alphabet=st.sampled_from(list('2021年月日第三艘十北京大兴机场 iPhoneSE3ProWhatisthe“”《》"?？0123456789.万人元$')), max_size=40)


@settings(max_examples=150, deadline=None)
@given(_TEXT)
def test_parse_is_deterministic_and_constraints_keep_the_user_s_words(text):
    q = parse(text)
    assert q == qmod.parse.__wrapped__(text)  # the cache changes nothing
    for c in q.constraints:
        assert c.surface and c.surface in q.text


def test_bad_input_is_refused():
    with pytest.raises(TypeError):
        parse(None)  # type: ignore[arg-type]
