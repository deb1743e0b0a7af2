"""Heading-aware Markdown chunker, algorithm version 2.

An article becomes retrieval chunks in three deterministic stages, so that a chunk keeps its heading path
and code blocks or steps are not cut mid-way:

1. sections: every h1–h6 heading outside a code fence (by the rules of `text.markdown`) starts a section
   that carries its heading path; text before the first heading is the preamble, named after the article;
2. merge: neighbouring sections of one top-level topic are merged greedily toward 1200 code points, then
   groups under 400 fold into a neighbour of the same topic (forward first, then backward); a merged
   chunk is named after the section holding at least 60 % of its text, else the first substantial
   section, else the first one;
3. split: a group longer than 3200 is cut into windows overlapping by about 320, breaking in the second
   half of a window at a blank line, a newline, a sentence end or the window edge, never inside a fence
   (a fence longer than the cap stays whole, up to `MAX_WHOLE_FENCE_CHARS`).

Hostile input still gives normal-size chunks: a fence longer than `MAX_WHOLE_FENCE_CHARS` (an unclosed one
runs to the end of the article) is split like prose, at its blank lines and line ends, with an English
warning naming its line; a line over `LONG_LINE_CHARS` (split at sentence ends or the window edge, as every
line over the cap is) gets one too.

All budgets count Unicode code points (`len`), so Chinese and English text get the same limits.

Chunks are slices, not copies: the input is normalised once (`normalize_text`: BOM, CRLF/CR, control
characters; no trimming) and every chunk satisfies `result.text[c.start:c.end] == c.content`, overlap
included, so citations can quote by offset. A merged group is therefore the span from its first section's
first non-space character to its last section's last non-space character, keeping the separators the
author wrote instead of re-joining the sections with "\\n\\n"; stage 3 measures and splits that span. For
input that is already normalised the offsets index the input itself.

Every chunk is kept, however long the article: there is no cap on chunks per article,
so no text of an article is left out of search. The work stays linear in the input
because every stage is: sections are one scan, merging one pass, and a stage-3 window ends more than
`SPLIT_FLOOR_CHARS` past its start while the next begins at most `OVERLAP_CHARS` before that end, so each
window moves on by over 1,440 code points and costs at most `MAX_CHARS` of searching.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from petrichor_core.text.lang.texts import UNTITLED_HEADING
from petrichor_core.text.markdown import Fence, scan_marks
from petrichor_core.text.normalize import normalize_text
from petrichor_core.text.sentences import SENTENCE_ENDS
from petrichor_core.versions import CHUNK_ALGORITHM_VERSION as ALGORITHM_VERSION  # the contract's name for it

__all__ = ["ALGORITHM_VERSION", "LONG_LINE_CHARS", "MAX_CHARS", "MAX_WHOLE_FENCE_CHARS", "Chunk", "ChunkResult", "chunk_key", "chunk_markdown"]

MAX_CHARS = 3200
TARGET_CHARS = 1200
MIN_TAIL_CHARS = 400
SHORT_SECTION_CHARS = 120
OVERLAP_CHARS = 320
SPLIT_FLOOR_CHARS = MAX_CHARS * 55 // 100  # breaks are searched in [cursor + 1760, cursor + 3200]
MAX_WHOLE_FENCE_CHARS = 8 * MAX_CHARS
"""A fenced block up to this long stays one chunk (long listings do occur); a longer one is split, with a warning."""
LONG_LINE_CHARS = 16 * MAX_CHARS
"""A line longer than this gets a warning (every line over `MAX_CHARS` is split inside, as before)."""

_PREAMBLE_TOPIC = "\x00preamble"  # grouping key of the preamble; normalised headings never contain NUL


@dataclass(frozen=True, slots=True)
class Chunk:
    key: str
    position: int
    heading: str
    heading_path: tuple[str, ...]
    content: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ChunkResult:
    chunks: tuple[Chunk, ...]
    warnings: tuple[str, ...]
    text: str


class _Section(NamedTuple):
    start: int
    end: int
    length: int
    heading: str
    path: tuple[str, ...]
    topic: str  # the top-level heading, which a merged group never crosses


def chunk_key(position: int) -> str:
    """`chunk-001` for position 0; the pad is a minimum width, so position 999 gives `chunk-1000`."""
    return f"chunk-{position + 1:03d}"


def chunk_markdown(markdown: str, title: str) -> ChunkResult:
    """Chunk one article; `title` names the preamble and headings whose text is empty."""
    text = normalize_text(markdown)
    stripped = text.strip()
    if not stripped:
        return ChunkResult(chunks=(), warnings=(), text=text)
    offset = len(text) - len(text.lstrip())
    preamble_heading = title if title.strip() else UNTITLED_HEADING

    sections, fences = _parse_sections(stripped, title, preamble_heading)
    warnings = _oversize_warnings(stripped, fences)
    atomic = [(start, end) for start, end in fences if end - start <= MAX_WHOLE_FENCE_CHARS]
    chunks: list[Chunk] = []
    for group in _merge_sections(sections):
        heading, path = _group_heading(group, preamble_heading)
        for start, end in _split_long(stripped, group[0].start, group[-1].end, atomic):
            position = len(chunks)
            chunks.append(
                Chunk(
                    key=chunk_key(position),
                    position=position,
                    heading=heading,
                    heading_path=path,
                    content=stripped[start:end],
                    start=start + offset,
                    end=end + offset,
                )
            )
    return ChunkResult(chunks=tuple(chunks), warnings=tuple(warnings), text=text)


def _oversize_warnings(body: str, fences: list[tuple[int, int]]) -> list[str]:
    """One warning per fence over `MAX_WHOLE_FENCE_CHARS`, one for all lines over `LONG_LINE_CHARS`."""
    warnings: list[str] = []
    line_no, counted_to = 1, 0
    for start, end in fences:
        if end - start <= MAX_WHOLE_FENCE_CHARS:
            continue
        line_no += body.count("\n", counted_to, start)
        counted_to = start
        unclosed = " (never closed, so it runs to the end)" if end == len(body) and not _closes(body, start) else ""
        warnings.append(
            f"code block at line {line_no} is {end - start} characters long{unclosed}; "
            f"split at line boundaries into chunks of at most {MAX_CHARS} characters"
        )
    long_lines, longest, longest_line = 0, 0, 0
    for line_no, length in _long_lines(body):
        long_lines += 1
        if length > longest:
            longest, longest_line = length, line_no
    if long_lines:
        warnings.append(
            f"{long_lines} line(s) longer than {LONG_LINE_CHARS} characters (the longest, line {longest_line}, "
            f"has {longest}); split inside the line at sentence ends or every {MAX_CHARS} characters"
        )
    return warnings


def _long_lines(body: str) -> Iterator[tuple[int, int]]:
    """(line number, length) of each line over `LONG_LINE_CHARS`, in one pass over the newlines (a regex
    for "a run of that many non-newlines" retries from every position of a line just under it: quadratic)."""
    start, line_no = 0, 1
    while start <= len(body):
        end = body.find("\n", start)
        if end < 0:
            end = len(body)
        if end - start > LONG_LINE_CHARS:
            yield line_no, end - start
        start, line_no = end + 1, line_no + 1


def _closes(body: str, fence_start: int) -> bool:
    """Whether the fence opened at `fence_start` has a closing fence line (its span then ends on one)."""
    last_line = body.rfind("\n", fence_start) + 1
    return last_line > fence_start and body[last_line:].lstrip(" \t\f\r").startswith(("```", "~~~"))


def _parse_sections(body: str, title: str, preamble_heading: str) -> tuple[list[_Section], list[tuple[int, int]]]:
    """Stage 1 over `body` (the trimmed text): sections plus the fenced blocks as (start, end) spans.

    Headings and fences are `text.markdown`'s. A fence span runs from its opener's line start to its
    closer's line end (an unclosed fence runs to the end).
    """
    sections: list[_Section] = []
    fences: list[tuple[int, int]] = []
    stack: list[tuple[int, str]] = []
    section_start, heading = 0, preamble_heading
    path: tuple[str, ...] = ()
    fence_start = -1
    for mark in scan_marks(body):
        if isinstance(mark, Fence):
            if mark.opens:
                fence_start = mark.start
            else:
                fences.append((fence_start, mark.end))
                fence_start = -1
            continue
        _append_section(sections, body, section_start, mark.start, heading, path)
        heading = mark.title or title
        while stack and stack[-1][0] >= mark.level:
            stack.pop()
        stack.append((mark.level, heading))
        section_start, path = mark.start, tuple(name for _, name in stack)
    if fence_start >= 0:
        fences.append((fence_start, len(body)))
    _append_section(sections, body, section_start, len(body), heading, path)
    return sections, fences


def _append_section(sections: list[_Section], body: str, start: int, end: int, heading: str, path: tuple[str, ...]) -> None:
    # `start` is a heading line or the first non-space character of the body, so only the end needs trimming.
    while end > start and body[end - 1].isspace():
        end -= 1
    if end > start:
        sections.append(_Section(start, end, end - start, heading, path, path[0] if path else _PREAMBLE_TOPIC))


def _merge_sections(sections: list[_Section]) -> list[list[_Section]]:
    """Stage 2: greedy merge within a top-level topic, then fold small groups into a neighbour."""
    groups: list[list[_Section]] = []
    current: list[_Section] = []
    current_len = 0
    only_short = True
    for section in sections:
        if current:
            projected = current_len + section.length + 1
            may_overflow = current_len < MIN_TAIL_CHARS and projected <= MAX_CHARS
            same_topic = section.topic == current[0].topic
            if same_topic and (only_short or may_overflow or projected <= TARGET_CHARS):
                current.append(section)
                current_len = projected
                only_short = only_short and section.length <= SHORT_SECTION_CHARS
                continue
            groups.append(current)
        current, current_len = [section], section.length
        only_short = section.length <= SHORT_SECTION_CHARS
    if current:
        groups.append(current)

    lengths = [sum(s.length for s in group) for group in groups]
    for i in range(len(groups) - 1, -1, -1):
        if lengths[i] >= MIN_TAIL_CHARS:
            continue
        topic = groups[i][0].topic
        if i + 1 < len(groups) and groups[i + 1][0].topic == topic and lengths[i] + lengths[i + 1] <= MAX_CHARS:
            groups[i] += groups.pop(i + 1)
            lengths[i] += lengths.pop(i + 1)
        elif i > 0 and groups[i - 1][0].topic == topic and lengths[i] + lengths[i - 1] <= MAX_CHARS:
            groups[i - 1] += groups.pop(i)
            lengths[i - 1] += lengths.pop(i)
    return groups


def _group_heading(group: list[_Section], preamble_heading: str) -> tuple[str, tuple[str, ...]]:
    """The chunk's title: the section holding ≥ 60 % of the text, else the first one over 120, else the first."""
    if len(group) == 1:
        return group[0].heading, group[0].path
    total = sum(s.length for s in group)
    anchor = next(
        (s for s in group if 5 * s.length >= 3 * total),
        next((s for s in group if s.length > SHORT_SECTION_CHARS), group[0]),
    )
    if not anchor.path:
        return preamble_heading, ()
    return anchor.path[-1], anchor.path


def _split_long(body: str, start: int, end: int, fences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Stage 3: the trimmed (start, end) pieces of one group's span; the span itself unless it exceeds the cap."""
    if end - start <= MAX_CHARS:
        return [(start, end)]
    fence_starts = [s for s, _ in fences]
    first = bisect_left(fence_starts, start)
    last = bisect_left(fence_starts, end)
    starts = fence_starts[first:last]
    ends = [min(e, end) for _, e in fences[first:last]]

    def fence_end_around(i: int) -> int:
        """The end of the fence strictly containing position `i`, or -1."""
        k = bisect_left(starts, i) - 1
        return ends[k] if k >= 0 and i < ends[k] else -1

    pieces: list[tuple[int, int]] = []
    cursor = start
    while cursor < end:
        stop = cursor + MAX_CHARS
        if stop < end:
            brk = _break_point(body, cursor + SPLIT_FLOOR_CHARS, stop, fence_end_around)
            if brk >= 0:
                stop = brk
            else:
                stop = max(stop, fence_end_around(stop))
        piece = _trim(body, cursor, min(stop, end))
        if piece is not None:
            pieces.append(piece)
        if stop >= end:
            break
        following = max(stop - OVERLAP_CHARS, cursor + 1)
        following = max(following, fence_end_around(following))
        newline = body.find("\n", following, stop)
        if newline >= 0:
            following = newline + 1  # start the overlap on a line boundary
        cursor = following
    return pieces


def _break_point(body: str, floor: int, limit: int, fence_end_around: Callable[[int], int]) -> int:
    """Where a window ends: the last blank line after `floor`, else the last newline, else just after the last
    sentence end, all before `limit`; a candidate inside a fence is passed over for the next kind. -1 if none."""
    blank = body.rfind("\n\n", floor + 1, limit)
    if blank >= 0 and fence_end_around(blank) < 0:
        return blank
    newline = body.rfind("\n", floor + 1, limit)
    if newline >= 0 and fence_end_around(newline) < 0:
        return newline
    sentence_end = max(body.rfind(mark, floor, limit) for mark in SENTENCE_ENDS) + 1
    if sentence_end > 0 and fence_end_around(sentence_end) < 0:
        return sentence_end
    return -1


def _trim(body: str, start: int, end: int) -> tuple[int, int] | None:
    """`body[start:end]` without surrounding whitespace, as offsets; None if it is blank."""
    while start < end and body[start].isspace():
        start += 1
    while end > start and body[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None
