"""The offline answerer's choice of sentence: answer-type cues, phrase alignment, heading share, whole sentences and evidence rank."""

from __future__ import annotations

import pytest

from petrichor_core.models.protocols import EvidenceText
from petrichor_serving.answer.answer_types import asked_type, holds_answer
from petrichor_serving.answer.answers import answer, score_units


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("学校的面积是多大？", "number"),
        ("开办第一年有多少学生？", "number"),
        ("How many students enrolled in the first year?", "number"),
        ("蒋庆在哪一年申请了提前退休？", "time"),
        ("When was the school founded?", "time"),
        ("In which year did the league start?", "time"),
        ("What year did the league start?", "time"),
        ("浪花鱼分布在哪里？", "place"),
        ("Which country hosts the office?", "place"),
        ("马齐去世后的谥号是什么？", None),
        ("鬣齿兽出现在哪一时期？", "time"),  # "在哪" inside "在哪一时期" asks when, not where
        ("工厂投产时间", "time"),  # no question word: the last noun says what is asked
        ("新版发布日期？", "time"),
        ("年会的举办地", "place"),
        ("Plant opening date", "time"),
        ("Annual meeting venue?", "place"),
        ("时间管理的方法", None),  # the noun leads, it is not what is asked
    ],
)
def test_the_question_wording_names_the_kind_of_answer(question, kind):
    found = asked_type(question)
    assert (found.name if found else None) == kind


def test_a_number_the_question_names_is_no_answer():
    number = asked_type("1.4 版之后有多少个团队？")
    assert not holds_answer(number, "从1.4版起由团队接续开发。", "1.4 版之后有多少个团队？")
    assert holds_answer(number, "从1.4版起由3个团队接续开发。", "1.4 版之后有多少个团队？")
    time = asked_type("他在哪一年退休？")
    assert holds_answer(time, "2001年申请提前退休。", "他在哪一年退休？")
    assert not holds_answer(time, "他申请提前退休。", "他在哪一年退休？")


def test_the_sentence_holding_the_asked_kind_wins_over_one_repeating_the_subject():
    passage = "嘉诺撒圣家学校是香港天主教嘉诺撒仁爱修会所创办的津贴女子小学，位于九龙城联合道。学校校舍面积约3000平方米，设有礼堂和图书馆。"
    reply = answer("嘉诺撒圣家学校的面积是多大？", [EvidenceText("e1", "嘉诺撒圣家学校", (), passage)])
    best = next(c for c in reply["citations"] if c["rank"] == 1)
    assert best["quote"] == "学校校舍面积约3000平方米，设有礼堂和图书馆。"


def test_the_sentence_the_question_paraphrases_wins():
    passage = (
        "The festival is held every summer in the old town. "
        "The first festival was organised by the local rowing club in 1921. "
        "The club also organises a winter race."
    )
    scored = score_units("Who organised the first festival?", [EvidenceText("e1", "Festival", (), passage)])
    assert scored[0].unit.text == "The first festival was organised by the local rowing club in 1921."


def test_a_lower_ranked_item_must_match_clearly_better():
    first = EvidenceText("e1", "t", (), "Redis 默认监听 6379 端口。")
    second = EvidenceText("e2", "t", (), "Redis 默认监听 6380 端口。")
    scored = score_units("Redis 默认监听哪个端口？", [first, second])
    assert [s.evidence for s in scored] == [1, 2] and scored[0].score > scored[1].score


def test_a_headline_sharing_a_few_question_words_does_not_outvote_the_fact():
    """News headlines share words with long questions; their terms count by the share the question names."""
    headline = EvidenceText(
        "e1",
        "Amazon sellers sound off on the FTC's long-overdue antitrust case",
        (),
        "Many of them have sold on the site for over a decade. Amazon sellers say the case is long overdue.",
    )
    fact = EvidenceText("e2", "Regulators weigh in", (), "The agency says Amazon charges sellers fulfilment and advertising fees that keep rising.")
    scored = score_units("Which fees did the FTC say Amazon charges its sellers?", [headline, fact])
    assert scored[0].unit.text.startswith("The agency says Amazon charges sellers")


def test_a_title_the_question_names_whole_still_points_to_its_article():
    other = EvidenceText("e1", "阿德莱德大学", (), "阿德莱德大学的学生多来自南澳州。")
    named = EvidenceText("e2", "福林德斯大学", (), "学校于1966年开办，第一年有400名学生。")
    scored = score_units("福林德斯大学开办第一年有多少学生？", [other, named])
    assert scored[0].evidence == 2


def test_a_clause_after_a_chinese_semicolon_is_quoted_with_its_sentence():
    passage = (
        "龙山国小创立于1896年。1968年台湾实施九年国民教育后，改为「台北市龙山区龙山国民小学」；"
        "1990年因台北市行政区重划，改「台北市万华区龙山国民小学」。"
    )
    reply = answer("龙山国小为什么最后改为台北市万华区龙山国民小学？", [EvidenceText("e1", "龙山国小", (), passage)])
    best = next(c for c in reply["citations"] if c["rank"] == 1)
    assert best["quote"] == passage[passage.index("1968年") :]


def test_place_wording_and_demonstratives():
    assert asked_type("马纳瓜在什么地方？").name == "place"
    scored = score_units(
        "这张专辑的主题是什么？",
        [EvidenceText("e1", "专辑", (), "这张专辑共有十六首歌曲。专辑主题围绕宗教与战争。")],
    )
    assert scored[0].unit.text == "专辑主题围绕宗教与战争。"


def test_a_sentence_pointing_back_is_quoted_with_the_sentence_it_points_to():
    """The pointer is read by part of speech (a pronoun opens the sentence), not from a list of phrases."""
    passage = "大会设有多个奖项。大会又设立了勇创高峰奖，以鼓励勇于挑战自我的运动员。这个奖项由攀山好手钟建民取得。"
    reply = answer("钟建民取得了大会的什么奖？", [EvidenceText("e1", "大会", (), passage)])
    quotes = [c["quote"] for c in reply["citations"]]
    assert "大会又设立了勇创高峰奖，以鼓励勇于挑战自我的运动员。这个奖项由攀山好手钟建民取得。" in quotes
    english = "The club added a new prize last year. It went to a rower from Leeds. Results follow in May."
    reply = answer("Who won the new prize?", [EvidenceText("e1", "Club", (), english)])
    assert any(c["quote"] == "The club added a new prize last year. It went to a rower from Leeds." for c in reply["citations"])


def test_a_sentence_not_opening_on_a_pronoun_stands_alone():
    passage = "大会设有多个奖项。钟建民取得勇创高峰奖。"
    reply = answer("钟建民取得了什么奖？", [EvidenceText("e1", "大会", (), passage)])
    assert reply["citations"][0]["quote"] == "钟建民取得勇创高峰奖。"


def test_a_dates_number_is_no_count():
    number = asked_type("河南2021年的粮食总产量是多少？")
    assert not holds_answer(number, "12月10日，河南正式公布2021年全年粮食总产量。", "河南2021年的粮食总产量是多少？")
    assert holds_answer(number, "全年粮食总产量1308.84亿斤。", "河南2021年的粮食总产量是多少？")
    years = "他在公司工作了多少年？"  # a question that counts time takes the years as its number
    assert holds_answer(asked_type(years), "他在公司工作了12年。", years)


def _cited(question: str, *passages: str) -> list[str]:
    reply = answer(question, [EvidenceText(f"e{n}", "Guide", (), p) for n, p in enumerate(passages, 1)])
    for c in reply["citations"]:
        assert c["quote"] in passages[c["marker"] - 1]  # every quote, joined or not, is a verbatim slice
    return [c["quote"] for c in reply["citations"]]


def test_neighbouring_sentences_that_both_bear_on_the_question_are_one_quote():
    question = "When does the harbour festival hold its concerts and its parades?"
    passage = "The harbour festival holds concerts in June. The harbour festival holds parades in July.\n\nTickets are sold online."
    assert _cited(question, passage) == ["The harbour festival holds concerts in June. The harbour festival holds parades in July."]
    # across a paragraph break they stay two quotes
    apart = "The harbour festival holds concerts in June.\n\nThe harbour festival holds parades in July."
    assert _cited(question, apart) == ["The harbour festival holds concerts in June.", "The harbour festival holds parades in July."]


def test_a_further_quote_must_hold_a_question_word_the_others_lack():
    restating = _cited(
        "Which port does the relay listen on?",
        "The relay listens on port 7000 by default.",
        "Every relay listens on one port.",
    )
    assert restating == ["The relay listens on port 7000 by default."]
    adding = _cited(
        "Which port does the relay listen on, and which protocol?",
        "The relay listens on port 7000.\n\nThe relay speaks the gRPC protocol on that port.",
    )
    assert adding == ["The relay listens on port 7000.", "The relay speaks the gRPC protocol on that port."]


def test_a_unit_that_asks_is_not_the_answer():
    cited = _cited(
        "2022年超级碗冠军是谁",
        "如今比赛已经完成，那么2022年超级碗冠军是哪个队伍呢？\n\n2022年超级碗冠军是洛杉矶公羊队。",
    )
    assert cited[0] == "2022年超级碗冠军是洛杉矶公羊队。"


def test_a_question_asking_for_another_name_prefers_the_unit_that_gives_one():
    assert asked_type("和语在日语中被称为什么？").name == "alias"
    assert asked_type("What is the relay also known as?").name == "alias"
    assert asked_type("Who is also known for backing the startup?") is None  # "known for" is no alias
    assert asked_type("蔡琼辉当时的艺名叫什么？") is None  # a name, not another name
    cited = _cited("和语在日语中被称为什么？", "战后的日语中，和语词被外来语词取代。\n\n和语，日语又称大和言叶，是日语辞汇来源的一类。")
    assert cited[0] == "和语，日语又称大和言叶，是日语辞汇来源的一类。"
