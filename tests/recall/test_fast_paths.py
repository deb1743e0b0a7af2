"""Fast paths of recall equal the plain computations they replace."""

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_serving.recall.hits import compact_text

_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def _compact_by_regex(text: str, limit: int) -> str:
    """The regex formulation `compact_text` replaced."""
    ws = re.compile(r"\s+")
    if len(text) > 4 * limit:
        head = ws.sub(" ", text[: 4 * limit]).strip()
        if len(head) > limit:
            return head[:limit] + "…"
    text = ws.sub(" ", text).strip()
    return text if len(text) <= limit else text[:limit] + "…"


def test_whitespace_is_the_regex_class():
    assert all(re.fullmatch(r"\s", c) for c in _WHITESPACE)
    assert "".join(_WHITESPACE).split() == []


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(_WHITESPACE), st.sampled_from("ab中文。 x"), st.characters()), max_size=120).map("".join),
    st.integers(1, 40),
)
def test_compact_text_equals_the_regex_formulation(text, limit):
    assert compact_text(text, limit) == _compact_by_regex(text, limit)
