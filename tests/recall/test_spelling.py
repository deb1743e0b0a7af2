"""Unknown query words gain the indexed word they misspell; known words and inflections are left alone."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from petrichor_serving.recall.spelling import Vocabulary, corrected

WORDS = {"container": 9, "registry": 4, "enable": 7, "github": 3, "chart": 5, "charts": 2, "leaders": 6, "hacked": 1}


def vocabulary() -> Vocabulary:
    vocab = {w: i for i, w in enumerate(WORDS)}
    indptr = np.cumsum([0, *WORDS.values()]).astype(np.int64)
    return Vocabulary(vocab, indptr)


def test_typos_gain_the_word_they_misspell():
    terms = ["what", "containr", "registy", "enabel", "githb", "chartt"]
    assert corrected(terms, vocabulary()) == [
        "what",
        "containr",
        "container",
        "registy",
        "registry",
        "enabel",
        "enable",
        "githb",
        "github",
        "chartt",
        "chart",
    ]


def test_inflections_another_first_letter_and_short_words_gain_nothing():
    assert corrected(["leader", "sacked", "chr", "xyzzy"], vocabulary()) == ["leader", "sacked", "chr", "xyzzy"]


@given(st.lists(st.sampled_from([*WORDS, "安装", "快速", "v1", "a"]), max_size=8))
def test_a_query_of_indexed_words_is_unchanged(terms):
    assert corrected(terms, vocabulary()) == terms
