"""The one sentence rule: where the chunker may break, where a window may cut, what the rerank reads."""

from hypothesis import given
from hypothesis import strategies as st

from petrichor_core.text.sentences import SENTENCE_ENDS, ends_sentence, mark_sentence_ends


def sentences(text: str) -> list[str]:
    return [s for s in mark_sentence_ends(text).split("\n") if s.strip()]


def test_marks_and_a_period_before_a_space_end_a_sentence():
    text = "版本 v1.8 已发布。它支持 example.com 吗？Yes. It does; see 3.14\nNext line"
    assert sentences(text) == ["版本 v1.8 已发布", "它支持 example.com 吗", "Yes", " It does", " see 3.14", "Next line"]
    assert [i for i in range(len(text)) if ends_sentence(text, i, len(text))] == [
        text.index("。"),
        text.index("？"),
        text.index("Yes.") + 3,
        text.index(";"),
    ]


def test_a_period_ends_a_sentence_only_before_a_space_inside_the_span():
    assert not ends_sentence("end.", 3, 4)
    assert ends_sentence("end. x", 3, 6)
    assert not ends_sentence("end. x", 3, 4)  # the space lies beyond the span's end


def test_blank_pieces_are_left_out():
    assert sentences("。。\n\n  ；") == []
    assert sentences("") == []


@given(st.text(alphabet=st.sampled_from([*"ab .\n 中文", *SENTENCE_ENDS]), max_size=60))
def test_sentences_are_pieces_of_the_text_in_order_without_end_marks(text):
    cursor = 0
    for sentence in sentences(text):
        assert sentence.strip()
        assert not set(sentence) & (SENTENCE_ENDS | {"\n"})
        assert ". " not in sentence
        found = text.find(sentence, cursor)
        assert found >= cursor
        cursor = found + len(sentence)
