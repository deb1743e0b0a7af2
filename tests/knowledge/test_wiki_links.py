"""Finding `[[key|name]]` links: every match's key, stripped, in order of appearance."""

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from petrichor_pipeline.knowledge.wiki_links import WIKI_LINK, body_links, linked_keys


@given(st.text(alphabet="[]|ab 缓\n", max_size=40))
def test_keys_are_the_matches_first_groups(text: str):
    assert linked_keys(text) == [m.group(1).strip() for m in WIKI_LINK.finditer(text)]


def test_keys_in_order_with_and_without_names():
    assert linked_keys("见 [[entity-redis|Redis]] 与 [[ concept-缓存 ]]，[[bad\n]]") == ["entity-redis", "concept-缓存"]


BODY = st.text(alphabet="[]|ab 缓\n\x1f\u3000", max_size=40)


@given(st.lists(st.lists(st.one_of(st.none(), BODY), max_size=5), min_size=1, max_size=3), st.booleans(), st.integers(0, 2))
def test_a_columns_links_are_each_rows_links(chunks: list[list[str | None]], large: bool, cut: int):
    """Over the UTF-8 buffers of a (chunked, sliced, large or not) column: each row's `linked_keys`, in row
    order, with their rows."""
    kind = pa.large_string() if large else pa.string()
    arrays = [pa.array(["[[x]]" * cut, *rows], kind).slice(cut and 1) for rows in chunks]
    column = pa.chunked_array(arrays, kind)
    bodies = column.to_pylist()
    expected = [(row, key) for row, body in enumerate(bodies) for key in linked_keys(body or "")]
    rows, keys = body_links(column)
    assert list(zip(rows.tolist(), keys)) == expected
