"""The light stemmer shared by the offline model and the agent."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from petrichor_core.text.stem import stem


def test_suffixes_are_stripped_once_keeping_three_letters() -> None:
    assert stem("configured") == "configur" and stem("configure") == "configur"
    assert stem("running") == "runn" and stem("uses") == "use"
    assert stem("class") == "class" and stem("bed") == "bed" and stem("v2") == "v2"
    assert stem("release", ("ing", "ed", "es", "s")) == "release"


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", max_size=20))
def test_a_stem_is_a_prefix_of_its_word_and_never_shorter_than_three_letters_unless_the_word_is(word: str) -> None:
    out = stem(word)
    assert word.startswith(out)
    assert len(out) >= min(3, len(word))
