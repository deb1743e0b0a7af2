"""Page links kept by their body's digest: the same lists as scanning every body, however the cache stands."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_pipeline.builder.link_cache import linked_lists
from petrichor_pipeline.knowledge.wiki_links import linked_keys

BODY = st.one_of(st.none(), st.lists(st.sampled_from(["[[a|A]]", "[[ b ]]", "x", "\n", "[[c", "]]", "缓存"]), max_size=6).map("".join))


def _expected(bodies: list[str | None]) -> list[list[str]]:
    return [linked_keys(body or "") for body in bodies]


@settings(max_examples=80, deadline=None)
@given(first=st.lists(BODY, max_size=6), second=st.lists(BODY, max_size=6), large=st.booleans())
def test_cached_lists_equal_scanned_ones(tmp_path_factory, first, second, large):
    """A cold cache, a warm one holding some of the texts, and one the file system mangled all give each
    body's `linked_keys`; the cache then holds exactly the last check's texts."""
    cache = Path(tmp_path_factory.mktemp("links")) / "body_links.arrow"
    kind = pa.large_string() if large else pa.string()
    assert linked_lists(pa.chunked_array([pa.array(first, kind)], kind), cache).to_pylist() == _expected(first)
    assert linked_lists(pa.array(second + first, kind), cache).to_pylist() == _expected(second + first)
    held = pa.ipc.open_file(pa.memory_map(str(cache))).read_all() if cache.exists() else None
    assert held is None or held.num_rows == len({(body or "") for body in second + first})
    if cache.exists():
        cache.write_bytes(cache.read_bytes()[:20])  # a torn file reads as no cache
    assert linked_lists(pa.array(first, kind), cache).to_pylist() == _expected(first)


def test_no_cache_scans_every_body():
    assert linked_lists(pa.array(["[[a|A]] [[b]]", None, ""])).to_pylist() == [["a", "b"], [], []]
