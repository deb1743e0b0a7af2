"""Properties of child windows over generated Markdown: they cover their chunk, slice the article text
exactly, never cut a fenced block, stay within the target size, and a chunk that fits is one window."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petrichor_core.text.chunking import chunk_markdown
from petrichor_core.text.markdown import Fence, scan_marks
from petrichor_core.text.windows import chunk_windows, heading_paths
from tests.text.test_chunking_properties import articles


def _fences(text: str) -> list[tuple[int, int]]:
    """Fenced blocks of the whole article: opener line start to closer line end (unclosed: to the end)."""
    lead = len(text) - len(text.lstrip())
    spans, opened = [], -1
    for mark in scan_marks(text[lead:]):
        if isinstance(mark, Fence):
            if mark.opens:
                opened = mark.start + lead
            else:
                spans.append((opened, mark.end + lead))
                opened = -1
    if opened >= 0:
        spans.append((opened, len(text)))
    return spans


def _check(markdown: str, title: str, target: int, overlap: int) -> None:
    result = chunk_markdown(markdown, title)
    text = result.text
    paths = heading_paths(text, title)
    fences = _fences(text)
    for chunk in result.chunks:
        windows = chunk_windows(text, chunk.start, chunk.end, chunk.heading_path, paths, target, overlap)
        assert windows, "a non-empty chunk has a window"
        covered = [False] * (chunk.end - chunk.start)
        for n, w in enumerate(windows):
            assert w.position == n
            assert chunk.start <= w.start < w.end <= chunk.end
            assert text[w.start : w.end] == w.content
            assert w.content == w.content.strip()
            for i in range(w.start, w.end):
                covered[i - chunk.start] = True
            for fs, fe in fences:
                assert not fs < w.start < fe and not fs < w.end < fe, "a window edge inside a fence"
            inside_one_fence = any(fs <= w.start and w.end <= fe for fs, fe in fences)
            assert len(w.content) <= target or inside_one_fence
            if n:
                prev = windows[n - 1]
                assert prev.start < w.start and prev.end < w.end
                assert prev.end - w.start <= overlap
        missed = [chunk.start + i for i, c in enumerate(covered) if not c and not text[chunk.start + i].isspace()]
        assert not missed, f"characters outside every window: {missed[:5]}"
        if len(chunk.content) <= target:
            assert len(windows) == 1 and windows[0].content == chunk.content
            assert windows[0].heading_path == chunk.heading_path


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    markdown=articles(),
    title=st.sampled_from(["部署指南", "Guide", ""]),
    target=st.sampled_from([120, 300, 480, 600]),
    overlap=st.sampled_from([0, 64]),
)
def test_windows_cover_their_chunk_and_respect_fences(markdown: str, title: str, target: int, overlap: int) -> None:
    _check(markdown, title, target, overlap)


def test_window_heading_path_follows_the_section_it_starts_in() -> None:
    body = "甲" * 200 + "。"
    markdown = "# 指南\n\n## 安装\n\n" + body + "\n\n## 配置\n\n" + body + "\n"
    result = chunk_markdown(markdown, "指南")
    text = result.text
    (chunk,) = result.chunks
    windows = chunk_windows(text, chunk.start, chunk.end, chunk.heading_path, heading_paths(text, "指南"), target=240)
    assert [w.heading_path for w in windows] == [("指南",), ("指南", "配置")]  # the first starts at the h1 line


def test_a_long_fence_is_one_window() -> None:
    code = "\n".join(f"line {i} = {i}" for i in range(80))
    markdown = "# T\n\nintro sentence.\n\n```\n" + code + "\n```\n\nafter the code.\n"
    result = chunk_markdown(markdown, "T")
    text = result.text
    (chunk,) = result.chunks
    windows = chunk_windows(text, chunk.start, chunk.end, chunk.heading_path, heading_paths(text, "T"), target=200)
    fenced = [w for w in windows if "```" in w.content]
    assert len(fenced) == 1 and fenced[0].content.startswith("```") and fenced[0].content.endswith("```")


def test_a_window_that_starts_with_a_blank_line_is_not_repeated_by_the_next() -> None:
    # The overlap carries a blank line and two short lines into the second window; trimmed, it starts where
    # the third would (one code point shorter, the third fits the long last line): one window, not two.
    text = "w" * 80 + "\n\n" + "x" * 20 + "\n" + "y" * 20 + "\n" + "z" * 78 + "\n"
    windows = chunk_windows(text, 0, len(text), ("T",), heading_paths(text, "T"), target=120, overlap=64)
    assert [(w.start, w.end) for w in windows] == [(0, 102), (82, 202)]
    assert [w.position for w in windows] == [0, 1]
