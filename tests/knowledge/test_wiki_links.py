"""Finding `[[key|name]]` links: every match's key, stripped, in order of appearance."""

from hypothesis import given, strategies as st

from petrichor_pipeline.knowledge.wiki_links import WIKI_LINK, linked_keys


@given(st.text(alphabet="[]|ab 缓\n", max_size=40))
def test_keys_are_the_matches_first_groups(text: str):
    assert linked_keys(text) == [m.group(1).strip() for m in WIKI_LINK.finditer(text)]


def test_keys_in_order_with_and_without_names():
    assert linked_keys("见 [[entity-redis|Redis]] 与 [[ concept-缓存 ]]，[[bad\n]]") == ["entity-redis", "concept-缓存"]
