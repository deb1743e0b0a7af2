"""The soft router's rules, as a table in Chinese and English; the answer-language rule; the compared items."""

from __future__ import annotations

import pytest

from petrichor_serving.agent.router import QuestionClass, answer_language, classify, compared_items

D, F, S, C, X, M = (
    QuestionClass.DIRECT,
    QuestionClass.FACT,
    QuestionClass.STRUCTURE,
    QuestionClass.CONCEPT,
    QuestionClass.COMPARISON,
    QuestionClass.COMPLEX,
)


@pytest.mark.parametrize(
    "question,expected",
    [
        ("你好", D),
        ("thanks!", D),
        ("快照默认保留多少个版本？", F),
        ("What is the default RRF constant?", C),
        ("默认的最大文件大小是多少？", F),
        ("How do I start the HTTP service?", F),
        ("什么是 PageIndex？", C),
        ("Explain reciprocal rank fusion", C),
        ("How does the agent loop work", C),
        ("What is the difference between BM25 and vector search?", X),
        ("向量检索和 BM25 有什么区别？", X),
        ("Compare the offline model with an endpoint model", X),
        ("快照保留几个版本？怎么修改？", M),
        ("Where does data live? And how do I change it?", M),
    ],
)
def test_classify(question, expected):
    """The question alone; whether it asks for a section's outline is decided over the headings (below)."""
    route = classify(question)
    assert route.kind is expected, (question, route)
    assert route.hint


@pytest.mark.parametrize(
    "question,lang",
    [
        ("如何配置 Kubernetes 的 Operator", "zh"),
        ("Kubernetes Operator 是什么", "zh"),
        ("快照默认保留多少个版本？", "zh"),
        ("What is the default RRF constant?", "en"),
        ("How do I configure the Operator?", "en"),
    ],
)
def test_answer_language_follows_chinese_function_words(question, lang):
    assert answer_language(question) == lang
    assert classify(question).language == lang


@pytest.mark.parametrize(
    "question,items",
    [
        ("What is the difference between BM25 and vector search?", ("BM25", "vector search")),
        ("向量检索和 BM25 有什么区别？", ("向量检索", "BM25")),
        ("How does the offline model differ from an endpoint model?", ("offline model", "an endpoint model")),
        ("chunk_vector vs question_vector", ("chunk_vector", "question_vector")),
    ],
)
def test_compared_items(question, items):
    assert compared_items(question) == items


OUTLINE_QUESTIONS = [
    "快速开始需要哪些步骤？",
    "切片算法这篇文档有哪些章节？",
    "Which sections does the configuration reference have?",
    "What does the quick start guide walk through?",
    "Summarize the quick start.",
    "What is covered in the configuration reference?",
    "What does the configuration reference talk about?",
]
FACT_QUESTIONS = [
    "快照默认保留多少个版本？",
    "How do I start the HTTP service?",
    "Which port does the quick start use for the HTTP service?",
    "What is the default RRF constant?",
    "What does PETRICHOR_KEEP_SNAPSHOTS set?",
    "Which port does the section on the quick start use?",
    "切片算法的第一个阶段做什么？",
]


@pytest.mark.slow  # reads the session's build of the bundled corpus
@pytest.mark.parametrize("question", OUTLINE_QUESTIONS)
def test_a_question_made_of_a_sections_words_and_words_about_documents_asks_for_its_outline(served_snapshot, question):
    from petrichor_serving.agent import structure
    from petrichor_serving.recall.access import Scope

    snap, _ = served_snapshot
    route = classify(question)
    allowed = structure.scope_articles(snap, Scope())
    assert route.kind in (F, C) and structure.asks_for_outline(snap, question, allowed, route.language) is not None


@pytest.mark.slow  # reads the session's build of the bundled corpus
@pytest.mark.parametrize("question", FACT_QUESTIONS)
def test_a_question_with_a_word_of_its_own_asks_a_fact(served_snapshot, question):
    from petrichor_serving.agent import structure
    from petrichor_serving.recall.access import Scope

    snap, _ = served_snapshot
    route = classify(question)
    assert structure.asks_for_outline(snap, question, structure.scope_articles(snap, Scope()), route.language) is None
