"""The rerank's best-sentence points: the question's words said together outrank the same words scattered."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from petrichor_core.text.sentences import mark_sentence_ends
from petrichor_serving.recall.fusion import fuse
from petrichor_serving.recall.hits import Hit, knowledge_sentences, normalize_knowledge_text
from petrichor_serving.recall.rerank import best_sentence, rerank


def hit(chunk: int, text: str) -> Hit:
    return Hit(
        kb_id="kb", article_id=str(chunk), title="", path="", heading_path=(), snippet="", content=text, routes=["chunk_bm25"], chunk_id=str(chunk)
    )


def test_best_sentence_counts_the_weighted_tokens_of_one_sentence():
    text = "The backup runs nightly. Restore takes an hour.\nBackup restore is tested weekly"
    assert best_sentence(text, ["backup", "restore", "weekly"]) == 3.0
    assert best_sentence(text, ["backup", "restore", "weekly"], {"backup": 0.2, "restore": 0.5, "weekly": 1.0}) == pytest.approx(1.7)
    assert best_sentence(text, ["backup", "backup"]) == 1.0  # a token counts once
    assert best_sentence("", ["backup"]) == 0.0
    assert best_sentence(text, []) == 0.0


def test_the_passage_that_says_it_in_one_sentence_ranks_first():
    scattered = hit(1, "2023年春节档开始了。首日的天气很好。票房冠军是谁还不知道")
    together = hit(2, "数据显示。2023年春节档首日票房冠军是《流浪地球2》。")
    pool = fuse([[scattered, together, hit(3, "春节档预售开启")]])  # the scattered one has the better fused score
    question = "2023年春节档首日票房冠军"
    assert [h.chunk_id for h in rerank(question, pool, sentence_weight=0.0)] == ["1", "2", "3"]
    assert [h.chunk_id for h in rerank(question, pool)] == ["2", "1", "3"]


@given(st.text(alphabet=st.sampled_from([*"aB .\n;。中文İ9", "x", "？"]), max_size=80))
def test_sentences_normalised_at_once_equal_each_sentence_normalised(text):
    joined, each = knowledge_sentences(text)
    expected = tuple(n for n in map(normalize_knowledge_text, mark_sentence_ends(text).split("\n")) if n)
    assert each == expected
    assert joined.replace("\n", "") == normalize_knowledge_text(text)
