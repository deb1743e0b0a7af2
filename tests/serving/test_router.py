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
        ("快速开始需要哪些步骤？", S),
        ("切片算法这篇文档有哪些章节？", S),
        ("列出配置文档的所有小节", S),
        ("Which sections does the configuration reference have?", S),
        ("What does the part on mount points cover?", S),
        ("What topics are in the monitoring section of the logging guide?", S),
        ("Give me an overview of the user data security appendix.", S),
        ("How is the section on customizing Lightspeed organised?", S),
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
