"""Markdown structure every part of Petrichor agrees on: which lines are headings, fences and fenced code.

One linear scanner, the chunker's, serves the chunker, the sources' title, the PageIndex
tree, the guide cleaner, wiki pages, local summaries and the offline model, so a heading has the same
title wherever it is read.

The rules:

- a fence line is one that starts with optional ASCII whitespace and then ```` ``` ```` or `~~~`; any
  fence line toggles the fence, whatever its kind (as in the reference). Lines inside a fence are code,
  never headings;
- a heading is `#{1,6}`, ASCII whitespace, then its text: `^(#{1,6})\\s+(.+?)(?:\\s+#+)?\\s*$` with `\\s`
  the ASCII class `[\\t\\n\\f\\r ]` (RE2's, so U+3000 does not separate a heading mark). `#hashtag` and
  `####### x` are not headings;
- a closing run of `#`s is dropped only when whitespace separates it from the text (CommonMark's rule):
  `## Using C#` is "Using C#", `# Title ##` is "Title". The reference pattern ends in `\\s*#*\\s*$`,
  which would cut "Using C#" to "Using C"; this is the one place where Petrichor departs from it;
- a heading's text is capped at `MAX_HEADING_CHARS` (`text.limits`), so a huge heading line cannot become
  every chunk's heading path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import Enum
from typing import NamedTuple

from petrichor_core.text.limits import MAX_HEADING_CHARS, capped

_ASCII_SPACE = "\t\n\f\r "
_HEADING_MARK = re.compile(r"(#{1,6})[\t\n\f\r ]+")
# A line that may be a heading (group 1) or is a fence line. Inside one line `\s` can only be one of
# `[\t\f\r ]`, so the second branch is the fence pattern `^\s*(```|~~~)`. Searching for a literal "\n"
# prefix is several times faster in `re` than a MULTILINE `^`.
_LINE_OF_INTEREST = re.compile(r"\n(?:(#)|[\t\f\r ]*(?:```|~~~))")
_TABLE_RULE = re.compile(r"^[\s|:\-+]+$")
# The line records are named tuples rather than dataclasses: the chunker makes one per heading and fence,
# and a tuple is built in half the time.


class Heading(NamedTuple):
    """An ATX heading outside fences; `start`/`end` are the line's offsets, its newline excluded."""

    line_no: int
    """0-based line index."""
    level: int
    title: str
    """The heading text without marks or surrounding whitespace; empty for a line such as `#  `."""
    start: int
    end: int


class Fence(NamedTuple):
    """A fence line; `opens` is False for the line that closes the block."""

    line_no: int
    opens: bool
    start: int
    end: int


class LineKind(Enum):
    BODY = "body"
    HEADING = "heading"
    FENCE = "fence"
    CODE = "code"
    """A line inside a fence."""


class Line(NamedTuple):
    line_no: int
    text: str
    kind: LineKind
    start: int
    """Offset of the line's first character in the scanned text."""
    heading: Heading | None = None

    @property
    def level(self) -> int:
        """Heading level 1–6, or 0 for any other line."""
        return self.heading.level if self.heading else 0

    @property
    def title(self) -> str:
        return self.heading.title if self.heading else ""


def heading_of(line: str) -> tuple[int, str] | None:
    r"""(level, title) if `line` is a heading by the rules above (fences aside), else None.

    Evaluated without backtracking (the regex form is cubic in `re` on long runs of spaces). The level
    is fixed by the hashes and `\s+` keeps its whole run, unless nothing is left for the text, which then
    is the run's last space (so `#  ` is a heading with an empty title and `# ` is none). Otherwise the
    text is the rest without trailing whitespace, and without a final `#` run that whitespace precedes;
    the title is that text stripped of surrounding spaces, Unicode ones included (U+3000 does not start a
    heading, but a title made of it is empty).
    """
    mark = _HEADING_MARK.match(line)
    if mark is None:
        return None
    level = len(mark.group(1))
    rest = line[mark.end() :]
    if not rest:
        return (level, "") if mark.end() - level >= 2 else None
    # `rest` starts with a non-space character, so neither strip below can leave it empty.
    rest = rest.rstrip(_ASCII_SPACE)
    text = rest.rstrip("#")
    if text != rest and text and text[-1] in _ASCII_SPACE:
        rest = text.rstrip(_ASCII_SPACE)
    return level, capped(rest.strip(), MAX_HEADING_CHARS)  # the reference's TrimSpace: Unicode spaces too


def scan_marks(markdown: str) -> Iterator[Heading | Fence]:
    """The headings and fence lines of `markdown` in order, in one pass that looks only at those lines."""
    in_fence = False
    line_no, counted_to = 0, 0
    find, count = markdown.find, markdown.count
    # Searching "\n" + markdown makes the first line like any other: a match at i is the line starting at i.
    for match in _LINE_OF_INTEREST.finditer("\n" + markdown):
        start = match.start()
        hashes = match.group(1)
        if hashes and in_fence:
            continue
        end = find("\n", start)
        if end < 0:
            end = len(markdown)
        found = heading_of(markdown[start:end]) if hashes else None
        if hashes and found is None:
            continue
        line_no += count("\n", counted_to, start)
        counted_to = start
        if found is not None:
            yield Heading(line_no, found[0], found[1], start, end)
        else:
            in_fence = not in_fence
            yield Fence(line_no, in_fence, start, end)


def scan_lines(markdown: str) -> Iterator[Line]:
    """Every line of `markdown` (split on "\\n") as a heading, a fence line, fenced code or body text."""
    marks = scan_marks(markdown)
    mark = next(marks, None)
    in_fence = False
    start = 0
    for line_no, text in enumerate(markdown.split("\n")):
        if mark is not None and mark.line_no == line_no:
            if isinstance(mark, Fence):
                in_fence = mark.opens
                yield Line(line_no, text, LineKind.FENCE, start)
            else:
                yield Line(line_no, text, LineKind.HEADING, start, mark)
            mark = next(marks, None)
        else:
            yield Line(line_no, text, LineKind.CODE if in_fence else LineKind.BODY, start)
        start += len(text) + 1


def headings(markdown: str) -> Iterator[Heading]:
    """The headings of `markdown` outside fences, in order."""
    return (mark for mark in scan_marks(markdown) if isinstance(mark, Heading))


def has_title_heading(markdown: str) -> bool:
    """Whether `markdown` has a level-1 heading outside fences (a page that names itself)."""
    return any(heading.level == 1 for heading in headings(markdown))


def is_title_line(line: str) -> bool:
    """Whether one line (no newline in it) is a level-1 heading: `has_title_heading` of it without the
    fence scan, since a single line cannot sit inside a fence."""
    if not line.startswith("#"):
        return False
    found = heading_of(line)
    return found is not None and found[0] == 1


def is_table_rule(line: str) -> bool:
    """A table's header rule such as `|---|:--:|`: layout, not content."""
    return "-" in line and _TABLE_RULE.match(line) is not None


def drop_code_blocks(markdown: str, replacement: str = " ") -> str:
    """`markdown` with every fenced block (fence lines included) replaced by `replacement`.

    An unclosed fence runs to the end, as in the chunker.
    """
    pieces: list[str] = []
    cursor, open_fence = 0, False
    for mark in scan_marks(markdown):
        if not isinstance(mark, Fence):
            continue
        open_fence = mark.opens
        if mark.opens:
            pieces.append(markdown[cursor : mark.start])
        else:
            pieces.append(replacement)
            cursor = mark.end
    pieces.append(replacement if open_fence else markdown[cursor:])
    return "".join(pieces)
