"""Caps and splits on one article, without a build: headings, titles, fences, lines; no chunk is left out."""

from __future__ import annotations

from petrichor_core.text.chunking import LONG_LINE_CHARS, MAX_CHARS, chunk_markdown
from petrichor_core.text.index_text import index_text
from petrichor_core.text.limits import MAX_HEADING_CHARS, MAX_HEADING_PATH_CHARS, MAX_TITLE_CHARS
from petrichor_pipeline.knowledge.page_index import parse_markdown_tree
from petrichor_pipeline.sources.markdown import read_markdown
from tests.hostile.corpus import FENCE_TAIL, LINE_TAIL, long_line, nested_headings, unclosed_fence


def _work(markdown: str) -> tuple[int, int]:
    """(chunks, characters written for them): what the chunk step and the snapshot store for an article."""
    doc = read_markdown(markdown.encode(), "bomb")
    result = chunk_markdown(doc.content, doc.title)
    size = sum(
        len(c.content) + len(c.heading) + sum(map(len, c.heading_path)) + len(index_text(doc.title, c.heading_path, c.content)) for c in result.chunks
    )
    return len(result.chunks), size


def test_a_2_mb_heading_line_is_capped_in_title_and_every_heading_path() -> None:
    markdown = "# " + "word " * 400_000 + "\n\nbody\n"
    doc = read_markdown(markdown.encode(), "bomb")
    assert len(doc.title) <= MAX_TITLE_CHARS + 1
    result = chunk_markdown(doc.content, doc.title)
    assert len(result.chunks) > 600 and result.chunks[-1].content.endswith("body")  # the whole line, then the body
    for chunk in result.chunks:
        assert len(chunk.heading) <= MAX_HEADING_CHARS + 1
        assert sum(map(len, chunk.heading_path)) <= MAX_HEADING_PATH_CHARS
        assert len(chunk.content) <= MAX_CHARS
    assert not any("left out" in w for w in result.warnings)


def test_chunk_work_grows_linearly_with_a_heading_line() -> None:
    # Doubling the line doubles the chunks and the stored text, past the former 120-chunk cap too.
    small = _work("# " + "tidal " * 80_000 + "\n\nbody\n")
    large = _work("# " + "tidal " * 160_000 + "\n\nbody\n")
    assert 120 < small[0] < large[0] <= 2.1 * small[0]
    assert large[1] <= 2.2 * small[1]
    # every chunk stores at most its own text plus capped headings, never the whole line again
    assert large[1] <= 2 * 960_000 + large[0] * 4 * (MAX_TITLE_CHARS + MAX_HEADING_PATH_CHARS)


def test_an_unclosed_fence_becomes_normal_chunks_with_its_tail() -> None:
    result = chunk_markdown(unclosed_fence(), "Fence")
    assert len(result.chunks) > 5
    assert all(len(c.content) <= MAX_CHARS for c in result.chunks)
    assert FENCE_TAIL in result.chunks[-1].content
    assert any("code block at line 5" in w and "never closed" in w for w in result.warnings), result.warnings
    # split at line boundaries: every chunk but the first starts a line of the fence
    text = result.text
    assert all(text[c.start - 1] == "\n" for c in result.chunks[1:])


def test_a_long_closed_fence_is_split_but_a_normal_long_listing_stays_whole() -> None:
    listing = "```\n" + "code line\n" * 500 + "```"
    assert [c.content for c in chunk_markdown("intro\n\n" + listing, "T").chunks] == ["intro\n\n" + listing]
    huge = "```\n" + "code line\n" * 5000 + "```\n\nafter"
    result = chunk_markdown(huge, "T")
    assert len(result.chunks) > 10 and all(len(c.content) <= MAX_CHARS for c in result.chunks)
    assert result.chunks[-1].content.endswith("after")
    assert len(result.warnings) == 1 and "code block at line 1" in result.warnings[0] and "never closed" not in result.warnings[0]


def test_a_long_line_is_split_with_a_warning_and_keeps_its_tail() -> None:
    result = chunk_markdown(long_line(), "Line")
    assert all(len(c.content) <= MAX_CHARS for c in result.chunks)
    assert LINE_TAIL in result.chunks[-1].content
    assert result.warnings == (result.warnings[0],) and "line 3" in result.warnings[0]


def test_ten_thousand_nested_headings_stay_linear() -> None:
    result = chunk_markdown(nested_headings(), "Nested")
    assert 0 < len(result.chunks) and result.warnings == ()
    assert all(len(c.heading_path) <= 6 and len(c.content) <= MAX_CHARS for c in result.chunks)


def test_ten_thousand_nested_headings_make_a_tree_of_ten_thousand_and_one_nodes() -> None:
    # The shared hostile build holds 2,000 of them; the whole 10,000 are parsed here, without embedding.
    nodes = parse_markdown_tree(nested_headings(), "Nested", "a1")
    assert len(nodes) == 10_002  # the root, the title heading, every nested one
    assert all(0 <= n.parent < n.position and nodes[n.parent].depth < n.depth for n in nodes[1:])
    assert max(len(n.path) for n in nodes) == 6  # the title heading above five nested levels
    assert len({n.node_key for n in nodes}) == len(nodes)


def test_ten_thousand_flat_headings_keep_every_section() -> None:
    # Over 120 chunks' worth: the former cap left most of it out with a warning; now every note is a chunk's.
    markdown = "".join(f"{'#' * (i % 6 + 1)} level {i}\n\nnote {i}\n\n" for i in range(10_000))
    result = chunk_markdown(markdown, "Flat")
    assert len(result.chunks) > 120 and result.warnings == ()
    found = "\n".join(c.content for c in result.chunks)
    assert all(f"note {i}\n" in found + "\n" for i in range(10_000))


def test_lines_just_under_the_long_line_warning_stay_linear() -> None:
    # Lines a little shorter than LONG_LINE_CHARS: a regex that retries from every position of such a
    # line was quadratic in its length (seconds per line); one pass over the newlines is not.
    result = chunk_markdown(("x" * (LONG_LINE_CHARS - 1) + "\n") * 40 + "y" * (LONG_LINE_CHARS + 1), "Lines")
    assert result.warnings == (result.warnings[0],) and "1 line(s)" in result.warnings[0] and "line 41" in result.warnings[0]
    assert result.chunks[-1].content.endswith("y")
