"""Follow-up construction: pairs on the same evidence, the second's subject replaced or dropped; and their scoring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from petrichor.evaluation.answers import AnswerOutcome, Quote, followup_hit, summarise_followups
from petrichor.evaluation.dataset import EvalDoc, EvalQuestion, GoldSection, load_dataset
from petrichor.evaluation.followups import (
    PhraseRarity,
    construct,
    load_written,
    pronoun_for,
    shared_phrases,
    subject_span,
)
from tests.conftest import REPO, SHARED_EVAL

BUNDLED = REPO / "tests" / "fixtures" / "bundled_eval"


def _q(qid, text, doc, lang="en", section=None, answers=()):
    sections = (GoldSection(doc, section),) if section else ()
    return EvalQuestion(qid, text, (doc,), gold_sections=sections, answers_all=answers, lang=lang)


def test_shared_phrases_are_trimmed_of_stopwords():
    spans = shared_phrases("How do I enable the Bulk Import feature?", "Who can use the Bulk Import page?", "en")
    words = "Who can use the Bulk Import page?".split()
    assert (4, 6) in spans  # "Bulk Import", without "the"
    assert [" ".join(words[i:j]) for i, j in spans] == ["Bulk Import"]


def test_the_rarest_shared_phrase_is_the_subject():
    questions = [f"How does Red Hat Developer Hub handle thing {i}?" for i in range(20)]
    first = "How do I install the Ansible plug-ins in Red Hat Developer Hub?"
    second = "What do the Ansible plug-ins add to Red Hat Developer Hub?"
    rarity = PhraseRarity([*questions, first, second])
    start, end = subject_span(first, second, "en", rarity)
    assert second[start:end] == "Ansible plug-ins"


def test_the_title_is_the_subject_when_both_questions_name_it():
    rarity = PhraseRarity(["马齐去世后的谥号是什么？", "马齐是哪个朝代的大臣？"])
    start, end = subject_span("马齐是哪个朝代的大臣？", "马齐去世后的谥号是什么？", "zh", rarity, title="马齐")
    assert (start, end) == (0, 2)


def test_pronouns_as_people_write_them():
    text = "What do the Ansible plug-ins add to the portal?"
    start = text.index("Ansible plug-ins")
    out = pronoun_for(text, start, start + len("Ansible plug-ins"), "en", "q")
    assert out in ("What do it add to the portal?", "What do that add to the portal?")
    possessive = "What is Bulk Import's support level?"
    assert pronoun_for(possessive, 8, 19, "en", "q") == "What is its support level?"
    zh = "嘉诺撒圣家学校的面积是多大？"
    assert {pronoun_for(zh, 0, 7, "zh", qid) for qid in ("a", "b", "c", "d", "e", "f")} == {"它的面积是多大？", "面积是多大？"}
    assert pronoun_for("请问嘉诺撒圣家学校在哪里？", 2, 9, "zh", "a") == "请问它在哪里？"


def test_construct_pairs_questions_on_one_section_and_opens_a_lone_titled_question():
    docs = [EvalDoc("g", "Guide", "x"), EvalDoc("p", "嘉诺撒圣家学校", "y")]
    questions = [
        _q("1", "How do I install the Ansible plug-ins?", "g", section=("Ansible",)),
        _q("2", "What do the Ansible plug-ins add to the portal?", "g", section=("Ansible",)),
        _q("3", "How do I rotate logs?", "g", section=("Logs",)),
        _q("4", "嘉诺撒圣家学校的面积是多大？", "p", lang="zh", answers=("3000平方米",)),
    ]
    made = construct(questions, docs, 10)
    assert [f.qid for f in made] == ["1->2", "4:opening->4"]
    first, second = made
    assert first.first.qid == "1" and "Ansible" not in first.question.question and first.subject == "Ansible plug-ins"
    assert second.first.question == "介绍一下嘉诺撒圣家学校。"
    assert second.question.answers_all == ("3000平方米",) and "嘉诺撒" not in second.question.question
    assert construct(questions, docs, 1) == made[:1]
    assert construct(questions, docs, 0) == ()


def test_followup_hit_needs_the_gold_answer_or_a_gold_citation():
    short = _q("a", "怎么改？", "d1", lang="zh", answers=("PETRICHOR_MODEL_CONCURRENCY",))
    free = _q("b", "How do I change that?", "d1")
    said = AnswerOutcome("a", "设置 PETRICHOR_MODEL_CONCURRENCY [1]", (Quote("q", "d2"),), 1.0)
    other = AnswerOutcome("a", "见配置文件 [1]", (Quote("q", "d1"),), 1.0)
    cited = AnswerOutcome("b", "Run it [1]", (Quote("q", "d1"),), 1.0)
    elsewhere = AnswerOutcome("b", "Run it [1]", (Quote("q", "d9"),), 1.0)
    none = AnswerOutcome("b", "not found", (), 1.0)
    assert followup_hit(short, said) and not followup_hit(short, other)
    assert followup_hit(free, cited) and not followup_hit(free, elsewhere) and not followup_hit(free, none)
    summary = summarise_followups([free], [cited])
    assert summary == {"questions": 1, "hit": 1.0, "not_found": 0.0}


def test_written_followups_load_and_bad_rows_are_named(tmp_path):
    made = load_written(BUNDLED)
    assert len(made) >= 10 and {f.question.lang for f in made} == {"en", "zh"}
    assert all(f.question.gold_doc_ids and f.first.question for f in made)
    (tmp_path / "followups.jsonl").write_text(json.dumps({"qid": "x", "question": "How?"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="followups.jsonl:1"):
        load_written(tmp_path)
    assert load_written(tmp_path / "none") == ()


@pytest.mark.parametrize("name", ["cmrc2018_zh", "rhdh_docs_en"])
def test_shared_sets_give_follow_ups_that_lean_on_the_first(name):
    directory = Path(SHARED_EVAL) / name
    if not (directory / "qa.jsonl").is_file():
        pytest.skip(f"{directory} is not here")
    dataset = load_dataset(directory)
    made = construct(dataset.questions, dataset.docs, 40)
    assert len(made) == 40
    for f in made:
        assert f.subject and f.subject not in f.question.question and f.question.question != f.original
