"""Properties of chunker v2 over generated Markdown (mixed Chinese/English, nested headings, fences, tables,
lists, very long paragraphs, CRLF), and parity with a literal transcription of the reference pseudocode.

The transcription joins merged sections with "\n\n" as the reference does; the chunker keeps the author's
separators instead, so the two agree exactly when every section is followed by a blank line."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from petrichor_core.text.chunking import MAX_CHARS, ChunkResult, chunk_markdown
from petrichor_core.text.normalize import normalize_text

# The ATX heading pattern, where a closing `#` run needs whitespace before it (`text.markdown`).
HEADING = re.compile(r"^(#{1,6})[\t\n\f\r ]+(.+?)(?:[\t\n\f\r ]+#+)?[\t\n\f\r ]*$")
FENCE = re.compile(r"^[\t\n\f\r ]*(```|~~~)")

WORDS = ["知识", "检索", "切片", "向量", "部署", "缓存", "数据库", "模型"] + ["redis", "deploy", "chunk", "index", "v2"]
ENDS = ["。", "！", "？", "；", ".", "!", "?", ";", "，", ",", ""]


@dataclass(frozen=True)
class OracleSection:
    start: int
    end: int
    path: tuple[str, ...]

    @property
    def topic(self) -> str:
        return self.path[0] if self.path else "\x00导语"


def oracle_structure(text: str, title: str) -> tuple[list[OracleSection], list[tuple[int, int]]]:
    """Stage 1 as the reference states it (trim, split lines, fence toggle, heading stack), with offsets;
    also the fenced blocks, each from its opener's first to its closer's last non-space character."""
    lead = len(text) - len(text.lstrip())
    body = text.strip()
    sections: list[OracleSection] = []
    fences: list[tuple[int, int]] = []
    stack: list[tuple[int, str]] = []
    buffer: list[tuple[int, str]] = []
    fence_open = -1

    def flush() -> None:
        if not buffer:
            return
        start, joined = buffer[0][0], "\n".join(line for _, line in buffer)
        buffer.clear()
        if joined.strip():
            first = start + len(joined) - len(joined.lstrip())
            sections.append(OracleSection(first, first + len(joined.strip()), tuple(t for _, t in stack)))

    offset = lead
    for line in body.split("\n"):
        if FENCE.match(line):
            if fence_open < 0:
                fence_open = offset + len(line) - len(line.lstrip())
            else:
                fences.append((fence_open, offset + len(line.rstrip())))
                fence_open = -1
            buffer.append((offset, line))
        else:
            match = HEADING.match(line)
            if match and fence_open < 0:
                flush()
                level = len(match[1])
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, match[2].strip() or title))
            buffer.append((offset, line))
        offset += len(line) + 1
    flush()
    if fence_open >= 0:
        fences.append((fence_open, lead + len(body)))
    return sections, fences


words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join)
sentence = st.tuples(words, st.sampled_from(ENDS)).map("".join)
paragraph = st.lists(sentence, min_size=1, max_size=6).map("".join)
medium_paragraph = st.tuples(sentence, st.integers(2, 60), st.sampled_from(["", " ", "\n"])).map(lambda t: t[2].join([t[0]] * t[1]))
long_paragraph = st.tuples(sentence, st.integers(100, 450), st.sampled_from(["", " ", "\n"])).map(lambda t: t[2].join([t[0]] * t[1]))
heading = st.tuples(st.sampled_from([1, 2, 2, 3, 3, 4]), words, st.sampled_from(["", " ##"])).map(lambda t: "#" * t[0] + " " + t[1] + t[2])
code_line = st.sampled_from(["x = 1", "# 注释", "## not a heading", "", "print('你好');", "  indented"])
fence = st.tuples(st.sampled_from(["```", "~~~", "```python"]), st.lists(code_line, min_size=0, max_size=12), st.integers(1, 40)).map(
    lambda t: t[0][:3] + t[0][3:] + "\n" + "\n".join(t[1] * t[2]) + "\n" + t[0][:3]
)
long_fence = st.tuples(code_line, st.integers(300, 700)).map(lambda t: "```\n" + "\n".join([t[0], "y = 2"] * t[1]) + "\n```")
table = st.lists(st.tuples(words, words), min_size=1, max_size=5).map(
    lambda rows: "| 名称 | value |\n|---|---|\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)
)
bullets = st.lists(sentence, min_size=1, max_size=6).map(lambda items: "\n".join("- " + i for i in items))
block = st.one_of(paragraph, medium_paragraph, medium_paragraph, long_paragraph, fence, long_fence, table, bullets)
section = st.tuples(heading, st.lists(block, max_size=3)).map(lambda t: [t[0], *t[1]])
# A preamble of a few blocks, then sections: a heading and up to three blocks each.
article_blocks = st.tuples(st.lists(block, max_size=2), st.lists(section, min_size=1, max_size=10)).map(
    lambda t: t[0] + [item for part in t[1] for item in part]
)


@st.composite
def articles(draw: st.DrawFn) -> str:
    blocks = draw(article_blocks)
    text = ""
    for item in blocks:
        text += item + draw(st.sampled_from(["\n\n", "\n", "\n\n\n"]))
    text = draw(st.sampled_from(["", "  ", "\n\n", " \n"])) + text
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


def check_properties(markdown: str, title: str, result: ChunkResult) -> None:
    text = result.text
    assert text == normalize_text(markdown)
    assert result.warnings == ()
    sections, fences = oracle_structure(text, title)
    for section in sections:
        assert text[section.start : section.end].strip() == text[section.start : section.end]

    covered = bytearray(len(text))
    for position, chunk in enumerate(result.chunks):
        assert chunk.position == position and chunk.key == f"chunk-{position + 1:03d}"
        assert 0 <= chunk.start < chunk.end <= len(text)
        assert text[chunk.start : chunk.end] == chunk.content
        assert chunk.content == chunk.content.strip()
        covered[chunk.start : chunk.end] = b"\x01" * (chunk.end - chunk.start)

        for start, end in fences:
            if end - start <= MAX_CHARS:
                assert not start < chunk.start < end, "chunk starts inside a fence"
                assert not start < chunk.end < end, "chunk ends inside a fence"
        if len(chunk.content) > MAX_CHARS:
            assert any(start < chunk.end and chunk.start < end for start, end in fences)

        inside = [s for s in sections if s.start < chunk.end and chunk.start < s.end]
        assert inside
        assert len({s.topic for s in inside}) == 1, "chunk spans two top-level topics"
        assert chunk.heading_path in {s.path for s in inside}
        preamble = title if title.strip() else "文档正文"
        assert chunk.heading == (chunk.heading_path[-1] if chunk.heading_path else preamble)

    uncovered = "".join(ch for ch, hit in zip(text, covered) if not hit)
    assert uncovered.strip() == "", "non-space text outside every chunk"


def reference_chunks(markdown: str, title: str) -> list[tuple[str, tuple[str, ...], str]]:
    """Stages 1-3 of the reference, written as its pseudocode reads: (heading, heading path, content) per chunk."""
    preamble = title if title.strip() else "文档正文"
    normalized = normalize_text(markdown).strip()
    sections: list[tuple[tuple[str, ...], str, str]] = []
    stack: list[tuple[int, str]] = []
    buffer: list[str] = []
    in_fence = False

    def flush() -> None:
        text = "\n".join(buffer).strip()
        buffer.clear()
        if text:
            path = tuple(t for _, t in stack)
            sections.append((path, path[-1] if path else preamble, text))

    for line in normalized.split("\n") if normalized else []:
        if FENCE.match(line):
            in_fence = not in_fence
            buffer.append(line)
            continue
        match = HEADING.match(line)
        if match and not in_fence:
            flush()
            level = len(match[1])
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, match[2].strip() or title))
        buffer.append(line)
    flush()

    def top(section: tuple[tuple[str, ...], str, str]) -> str:
        return section[0][0] if section[0] else "\x00导语"

    groups: list[list[tuple[tuple[str, ...], str, str]]] = []
    current: list[tuple[tuple[str, ...], str, str]] = []
    cur_len = 0
    for section in sections:
        if not current:
            current, cur_len = [section], len(section[2])
            continue
        same_top = top(section) == top(current[0])
        only_short = all(len(s[2]) <= 120 for s in current)
        projected = cur_len + len(section[2]) + 1
        may_overflow = cur_len < 400 and projected <= 3200
        if not same_top or (not only_short and not may_overflow and projected > 1200):
            groups.append(current)
            current, cur_len = [section], len(section[2])
            continue
        current.append(section)
        cur_len = projected
    if current:
        groups.append(current)

    def group_length(group: list[tuple[tuple[str, ...], str, str]]) -> int:
        return sum(len(s[2]) for s in group)

    i = len(groups) - 1
    while i >= 0:
        size = group_length(groups[i])
        key = top(groups[i][0])
        if size < 400:
            if i + 1 < len(groups) and top(groups[i + 1][0]) == key and size + group_length(groups[i + 1]) <= 3200:
                groups[i] = groups[i] + groups[i + 1]
                del groups[i + 1]
            elif i - 1 >= 0 and top(groups[i - 1][0]) == key and size + group_length(groups[i - 1]) <= 3200:
                groups[i - 1] = groups[i - 1] + groups[i]
                del groups[i]
        i -= 1

    out = []
    for group in groups:
        if len(group) == 1:
            heading, path = group[0][1], group[0][0]
        else:
            total = group_length(group)
            anchor = next((s for s in group if len(s[2]) >= 0.6 * total), None)
            anchor = anchor or next((s for s in group if len(s[2]) > 120), None) or group[0]
            heading, path = (anchor[0][-1], anchor[0]) if anchor[0] else (preamble, ())
        for piece in reference_split(("\n\n").join(s[2] for s in group)):
            out.append((heading, path, piece))
    return out


def reference_split(text: str, max_chars: int = 3200, overlap: int = 320) -> list[str]:
    if len(text) <= max_chars:
        return [text]
    spans: list[list[int]] = []
    offset = 0
    for line in text.split("\n"):
        if FENCE.match(line):
            if spans and spans[-1][1] < 0:
                spans[-1][1] = offset + len(line)
            else:
                spans.append([offset, -1])
        offset += len(line) + 1
    spans = [[start, end if end >= 0 else len(text)] for start, end in spans]

    def span_at(i: int) -> list[int] | None:
        return next((s for s in spans if s[0] < i < s[1]), None)

    def find_break(start: int, to: int) -> int:
        candidates = []
        p = text[:to].rfind("\n\n")
        if p > start:
            candidates.append(p)
        newline = text[:to].rfind("\n")
        if newline > start:
            candidates.append(newline)
        ends = list(re.finditer(r"[。！？；!?;]", text[start:to]))
        if ends:
            candidates.append(start + ends[-1].end())
        return next((c for c in candidates if span_at(c) is None), -1)

    pieces = []
    cursor, n = 0, len(text)
    while cursor < n:
        hard_end = cursor + max_chars
        end = hard_end
        if hard_end < n:
            c = find_break(cursor + max_chars * 55 // 100, hard_end)
            if c >= 0:
                end = c
            elif span_at(hard_end):
                end = span_at(hard_end)[1]
        piece = text[cursor:end].strip()
        if piece:
            pieces.append(piece)
        if end >= n:
            break
        following = end - overlap
        if following <= cursor:
            following = cursor + 1
        if span_at(following):
            following = span_at(following)[1]
        k = text[following:end].find("\n")
        if k >= 0:
            following = following + k + 1
        if following <= cursor:
            following = cursor + 1
        cursor = following
    return pieces


@st.composite
def blank_line_articles(draw: st.DrawFn) -> str:
    """Articles whose blocks are all followed by one blank line, so that section separators are "\n\n"."""
    return "\n\n".join(draw(article_blocks))


@pytest.mark.slow  # 150 generated articles through the chunker and the reference
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(markdown=blank_line_articles(), title=st.sampled_from(["部署指南", ""]))
def test_parity_with_the_reference_when_sections_are_separated_by_blank_lines(markdown: str, title: str) -> None:
    result = chunk_markdown(markdown, title)
    assert [(c.heading, c.heading_path, c.content) for c in result.chunks] == reference_chunks(markdown, title)


@pytest.mark.slow  # 150 generated articles through the chunker and the reference
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(markdown=articles(), title=st.sampled_from(["部署指南", "Guide", "", "  "]))
def test_chunks_cover_the_article_and_respect_its_structure(markdown: str, title: str) -> None:
    result = chunk_markdown(markdown, title)
    check_properties(markdown, title, result)
    assert chunk_markdown(markdown, title) == result


@settings(max_examples=300, deadline=None)
@given(line=st.text(alphabet="# \ta中\u3000", max_size=14), title=st.sampled_from(["部署指南", ""]))
@example(line="# ##", title="T")
@example(line="## Using C#", title="T")
@example(line="# Title ##", title="T")
@example(line="# # #", title="T")
@example(line="#  ", title="T")
@example(line="# ", title="T")
@example(line="## a # #\t", title="T")
@example(line="###### x ##  ", title="T")
@example(line="####### x", title="T")
@example(line="#\u3000x", title="T")
def test_heading_lines_follow_the_reference_pattern(line: str, title: str) -> None:
    markdown = "前言\n" + line + "\n正文"
    result = chunk_markdown(markdown, title)
    assert [(c.heading, c.heading_path, c.content) for c in result.chunks] == reference_chunks(markdown, title)


def assert_every_non_space_character_is_in_a_chunk(result: ChunkResult) -> None:
    """The gaps between the chunks' spans (in offset order) hold whitespace only: no text is lost."""
    text = result.text
    cursor = 0
    for start, end in sorted((c.start, c.end) for c in result.chunks):
        assert text[cursor:start].strip() == "", f"non-space text at {cursor}..{start} is in no chunk"
        cursor = max(cursor, end)
    assert text[cursor:].strip() == "", f"non-space text after {cursor} is in no chunk"


# Long enough to pass the former 120-chunk cap (about 346,000 characters of prose) several times over.
long_line = st.tuples(sentence, st.integers(5_000, 40_000), st.sampled_from(["", " "])).map(lambda t: t[2].join([t[0]] * t[1]))
many_sections = st.tuples(words, st.integers(130, 220)).map(lambda t: "\n\n".join(f"# {t[0]} {i}\n\n" + f"{t[0]} {i}。" * 90 for i in range(t[1])))
unclosed = st.tuples(code_line, st.integers(2_000, 20_000)).map(lambda t: "```\n" + "\n".join([t[0], "z = 3"] * t[1]))
huge_part = st.one_of(long_line, long_line.map(lambda line: "# " + line), many_sections, unclosed)


@st.composite
def huge_articles(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(huge_part, articles()), min_size=1, max_size=3).filter(lambda ps: sum(map(len, ps)) > 60_000))
    return draw(st.sampled_from(["\n\n", "\n", " "])).join(parts) + draw(st.sampled_from(["", "\nTAIL", " TAIL"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(markdown=huge_articles(), title=st.sampled_from(["超长文档", ""]))
def test_every_character_of_a_huge_article_reaches_a_chunk(markdown: str, title: str) -> None:
    result = chunk_markdown(markdown, title)
    text = result.text
    assert [c.position for c in result.chunks] == list(range(len(result.chunks)))
    assert all(text[c.start : c.end] == c.content for c in result.chunks)
    assert_every_non_space_character_is_in_a_chunk(result)
