"""The short answer the offline answerer opens with: a span of the evidence of the asked kind, or Yes / No."""

from __future__ import annotations

import pytest

from petrichor_core.models.protocols import EvidenceText
from petrichor_core.text.lang.texts import UNDECIDED
from petrichor_serving.answer.answer_types import defined_term, expand_acronym, find_spans, is_yes_no, short_kind
from petrichor_serving.answer.answers import answer


def _best(reply: dict) -> str:
    return next(c["quote"] for c in reply["citations"] if c["rank"] == 1)


def _ask(question: str, *passages: str) -> dict:
    return answer(question, [EvidenceText(f"e{n}", "t", (), p) for n, p in enumerate(passages, 1)])


@pytest.mark.parametrize(
    ("question", "passage", "short"),
    [
        ("How many workers does the plant employ?", "The plant opened in 1998. Today the plant employs 420 workers on two shifts.", "420"),
        ("When did the plant open?", "The plant employs 420 workers. The plant opened on March 3, 1998 near the river.", "March 3, 1998"),
        ("Where is the plant located?", "The plant employs 420 workers. The plant is located in Port Talbot, on the coast.", "Port Talbot"),
        ("Who founded the plant?", "The plant employs 420 workers. The plant was founded by Maria Lopez and her brother.", "Maria Lopez"),
        ("Which company bought the plant?", "The plant employs 420 workers. Last year Tata Steel bought the plant for cash.", "Tata Steel"),
        ("工厂有多少名工人？", "工厂建于1998年。工厂目前有420名工人，分两班工作。", "420名"),
        ("工厂在哪一年建成？", "工厂目前有420名工人。工厂于1998年建成投产。", "1998年"),
        ("工厂位于哪个城市？", "工厂目前有420名工人。工厂位于上海，靠近长江口。", "上海"),
        ("谁创办了这家工厂？", "工厂目前有420名工人。这家工厂由张艺谋创办。", "张艺谋"),
        ("会议计划由谁起草？", "会议于1874年召开，会议计划由海因里希·冯·施特凡起草。", "海因里希·冯·施特凡"),
        ("工厂投产时间", "工厂投产是本市工业的一件大事。工厂于1998年3月投产，目前有420名工人。", "1998年3月"),
    ],
)
def test_the_answer_opens_with_the_span_of_the_asked_kind(question, passage, short):
    reply = _ask(question, passage)
    assert reply["short_answer"] == short
    assert reply["answer"].startswith(short) and reply["opening"].startswith(short)
    assert short in reply["citations"][0]["quote"]  # the span is read from the first quote


def test_a_number_the_question_names_is_not_the_short_answer():
    reply = _ask("How many teams worked on version 2?", "Since version 2, 3 teams have worked on it.")
    assert reply["short_answer"] == "3"


def test_the_count_beside_the_counted_noun_wins_over_a_question_echo():
    """The best-matching sentence restates the question without a number; the one holding the count is quoted
    first and its number opens the answer."""
    reply = _ask(
        "How many snapshots are kept by default?",
        "How many old snapshots are kept by default is set with KEEP_SNAPSHOTS. The default concurrency is 64.",
        "Garbage collection keeps the newest 5 snapshots after each publish.",
    )
    assert reply["short_answer"] == "5"
    assert reply["citations"][0]["quote"] == "Garbage collection keeps the newest 5 snapshots after each publish."


@pytest.mark.parametrize(
    ("question", "passage", "verdict"),
    [
        ("Is the default RRF constant 60?", "The default RRF constant is 60, and ranks start at 0.", "Yes"),
        ("Does the service cache answers?", "The service does not cache answers; each question is searched again.", "No"),
        ("默认端口是否为 8080？", "默认端口为 8080，可以修改。", "是"),
        ("服务会缓存答案吗？", "服务不会缓存答案，每个问题都会重新检索。", "否"),
    ],
)
def test_yes_no_from_a_unit_that_states_or_negates_the_claim(question, passage, verdict):
    assert is_yes_no(question)
    reply = _ask(question, passage)
    assert reply["short_answer"] == verdict and reply["answer"].startswith(verdict)


@pytest.mark.parametrize(
    ("question", "passage", "lang"),
    [
        ("Does the service cache answers?", "The service searches the answers index again for each question.", "en"),
        ("服务会缓存答案吗？", "服务对每个问题都重新检索答案。", "zh"),
    ],
)
def test_yes_no_without_a_stating_unit_says_what_bears_on_it_without_guessing(question, passage, lang):
    reply = _ask(question, passage)
    assert reply["short_answer"] == UNDECIDED[lang]
    assert reply["citations"] and reply["citations"][0]["quote"] == passage


def test_questions_that_ask_for_no_short_answer_get_none():
    assert short_kind("Why does the build fail?") is None and not is_yes_no("Why does the build fail?")
    reply = _ask("Why does the build fail?", "The build fails when the corpus folder is missing.")
    assert reply["short_answer"] is None and reply["opening"] == ""
    assert reply["answer"].startswith("The build fails")


def test_a_definition_question_prefers_the_unit_that_defines_the_term():
    assert defined_term("What is RRF and why is it used?") == "RRF"
    assert defined_term("什么是主节点？") == "主节点" and defined_term("主节点是什么？") == "主节点"
    reply = _ask(
        "What is a shard?",
        "A shard is one horizontal slice of an index, held by one node.",
        "Each shard is copied twice and every shard is checked nightly for shard errors.",
    )
    assert _best(reply).startswith("A shard is")
    zh = _ask("主节点是什么？", "每个集群有一个主节点和多个从节点，主节点故障时会切换。\n\n主节点是负责协调写入的节点。")
    assert _best(zh) == "主节点是负责协调写入的节点。"


def test_an_acronym_is_spelt_out_from_the_evidence():
    assert expand_acronym("RRF", "## Stage 3: reciprocal rank fusion\n\nThe default RRF constant is 60.") == "reciprocal rank fusion"
    assert expand_acronym("RRF", "Ranks are fused.") is None and expand_acronym("Ranks", "Ranks are fused.") is None
    reply = _ask("What is RRF?", "## Stage 3: reciprocal rank fusion\n\nThe default RRF constant is 60, and ranks start at 0.")
    assert reply["answer"].startswith("RRF: reciprocal rank fusion")


def test_span_shapes():
    assert [s.text for s in find_spans("number", "面积约3000平方米，7.52‰，1269万人")] == ["3000平方米", "7.52‰", "1269万人"]
    assert [s.text for s in find_spans("time", "1999年3月5日，On 3 May 2001")] == ["1999年3月5日", "3 May 2001"]
    assert [s.text for s in find_spans("time", "于4100万年前出现，直至2100万年前")] == ["4100万年前", "2100万年前"]
    assert "Sam Bankman-Fried" in [s.text for s in find_spans("person", "The trial of Sam Bankman-Fried begins.")]


def test_a_name_answer_is_the_name_the_read_passages_share_in_its_fullest_written_form():
    reply = _ask(
        "Who was accused of fraud at the exchange and also spoke to the board?",
        "The prosecution said Bankman-Fried was accused of fraud at the exchange while Ellison's lawyers listened.",
        "Sam Bankman-Fried spoke to the board in March.",
        "Investors said Bankman-Fried had lost their trust.",
    )
    assert reply["short_answer"] == "Sam Bankman-Fried"


def test_a_possessive_of_a_name_the_question_gives_is_no_answer():
    reply = _ask("Who runs FTX now?", "FTX’s new chief is John Ray, who took over in November.")
    assert reply["short_answer"] == "John Ray"


@pytest.mark.parametrize(
    ("question", "yes_no"),
    [
        ("After the build of 3 May, and the rebuild of 4 May, was the snapshot kept?", True),
        ("Between the two guides, does either name the default port?", True),
        ("Considering both guides, which port, as the first says, does the service use?", False),
        ("Which guide, after the upgrade, is read first?", False),
        ("When the build fails, what happens to the snapshot?", False),
    ],
)
def test_a_yes_no_question_may_open_with_a_phrase_before_its_auxiliary(question, yes_no):
    assert is_yes_no(question) is yes_no


def test_quoted_speech_is_no_name_but_a_quoted_title_is():
    text = "It argues that Google “siphons off” readers, while “The Eras Tour” and 《三体》 sold out."
    found = [s.text for s in find_spans("entity", text)]
    assert "“siphons off”" not in found
    assert "“The Eras Tour”" in found and "《三体》" in found


def test_an_english_name_question_takes_the_name_the_passages_share():
    evidence = [
        EvidenceText("e1", "Sam Bankman-Fried trial: week two", (), "Ellison, the CEO of Alameda, said Bankman-Fried directed the loans."),
        EvidenceText("e2", "FTX", (), "Prosecutors say Bankman-Fried misled investors about FTX."),
        EvidenceText("e3", "Crypto", (), "Bankman-Fried was once called the face of crypto."),
    ]
    reply = answer("Who is the individual who directed the loans and misled investors?", evidence)
    assert reply["short_answer"] == "Sam Bankman-Fried"
    assert reply["answer"].startswith("Sam Bankman-Fried — ")


@pytest.mark.parametrize(
    "question",
    [
        "Could you outline the procedure for deploying the Helm chart into a namespace?",
        "As a platform engineer, could you provide a detailed explanation of the snapshot steps?",
        "I enabled the plugin, can you tell me what it shows?",
        "Can you explane how to instal the service offline?",
        "Is the snapshot kept, please explain?",
        "Are the preview plugins preinstalled, or do we need to get them from a registry?",
        "so how do i manage roles, is it all done in the web ui or what?",
        "你能介绍一下快照是怎么发布的吗？",
        "请说明默认端口是否可以修改。",
    ],
)
def test_requests_and_alternative_questions_are_not_yes_no(question):
    """A request put as a question, an alternative question and a how-question ask for something to be
    told, not for a verdict: the answer must not open with Yes, No or the undecided line."""
    assert not is_yes_no(question)


@pytest.mark.parametrize(
    "question",
    [
        "Can you run the service without a GPU?",
        "Could the build publish an empty snapshot?",
        "Is the default port 8080 or not?",
        "Does the article from the Verge suggest that prices rose, while the other says they fell?",
        "你能在离线环境中运行服务吗？",
    ],
)
def test_yes_no_questions_stay_yes_no(question):
    assert is_yes_no(question)


def test_a_request_is_answered_with_what_it_asks_for():
    reply = _ask("Could you outline how snapshots are published?", "A build publishes a snapshot by moving CURRENT once every file is written.")
    assert not reply["answer"].startswith(("Yes", "No", "The evidence read bears on this"))
    assert "moving CURRENT" in reply["answer"]


def test_a_name_does_not_take_the_word_that_opens_its_sentence():
    """A sentence start capitalises its first word; a common word there is no part of the name that follows,
    unless the text writes the whole run mid-sentence too ("The Verge")."""
    spans = lambda text: [s.text for s in find_spans("entity", text)]  # noqa: E731
    assert spans("When Google paid Apple, it won.") == ["Google", "Apple"]
    assert spans("Using Caroline Ellison as a front, he took funds.") == ["Caroline Ellison"]
    assert spans("The Vikings won. Then the Vikings lost.") == ["Vikings", "Vikings"]
    assert spans("The Verge said so, as reported by The Verge.") == ["The Verge", "The Verge"]
    reply = _ask("Which company paid for the default search placement?", "When Google paid Apple $20 billion, the deal made Google the default.")
    assert reply["short_answer"] == "Google"
