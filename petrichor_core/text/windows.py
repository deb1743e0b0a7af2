"""Child windows of a chunk (seed 003 父子分块): small, line- or sentence-aligned spans that are embedded
and indexed on their own, while search still returns and Read still shows the parent chunk.

A 1,200–3,200-code-point chunk is too coarse for one embedding (measured: dense vectors of whole chunks
lose about 11 points of doc R@1 to 512-code-point windows with the same embedder), but it is the right
unit to read. So each chunk is cut into windows of about `WINDOW_CHARS` code points:

- the chunk's span is first split into atoms: a fenced code block (opener to closer, by `text.markdown`'s
  scanner) is one atom; every other line is one, and a line longer than the target is split after its
  sentence ends, then at the target if a sentence is still longer;
- atoms are packed greedily up to the target; the next window starts with the last atoms of the previous
  one that fit in `OVERLAP_CHARS`, so a fact cut at a window edge is still whole in one window;
- a window never starts or ends inside a fence; a fence longer than the target is a window of its own.

Windows are offsets into the article's normalised text, like chunks: `text[w.start:w.end] == w.content`,
trimmed of surrounding whitespace. A chunk that fits in one window is one window equal to the chunk, so
its embedding text is the chunk's own index text and its vector is never computed twice.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from petrichor_core.text.markdown import Heading, LineKind, scan_lines, scan_marks
from petrichor_core.text.sentences import ends_sentence

WINDOW_CHARS = 480
"""Target window size in code points: the middle of the 300–600 range the seed gives, below the 512 of
fixed windows because aligned windows end at a line or sentence before the target."""
OVERLAP_CHARS = 64
"""At most this many code points of whole lines or sentences repeat at the start of the next window."""


@dataclass(frozen=True, slots=True)
class Window:
    position: int
    """0-based order within the chunk."""
    start: int
    end: int
    content: str
    heading_path: tuple[str, ...]
    """The chunk's path for a window that is the whole chunk, else the heading path in force where the
    window starts (a merged chunk holds several sections)."""


@dataclass(frozen=True)
class HeadingPaths:
    """Where each heading of an article starts and the heading path from there on (the chunker's stack)."""

    offsets: tuple[int, ...]
    paths: tuple[tuple[str, ...], ...]

    def at(self, offset: int) -> tuple[str, ...]:
        return self.paths[bisect_right(self.offsets, offset) - 1]


def heading_paths(text: str, title: str) -> HeadingPaths:
    """The heading paths of `text` (normalised, as chunked); a heading with no text is named `title`."""
    offsets: list[int] = [0]
    paths: list[tuple[str, ...]] = [()]
    stack: list[tuple[int, str]] = []
    lead = len(text) - len(text.lstrip())
    for mark in scan_marks(text[lead:]):
        if not isinstance(mark, Heading):
            continue
        while stack and stack[-1][0] >= mark.level:
            stack.pop()
        stack.append((mark.level, mark.title or title))
        offsets.append(mark.start + lead)
        paths.append(tuple(t for _, t in stack))
    return HeadingPaths(tuple(offsets), tuple(paths))


def _atoms(text: str, start: int, end: int, target: int) -> list[tuple[int, int]]:
    """The chunk span `text[start:end]` as contiguous (start, end) pieces that a window may not split."""
    atoms: list[tuple[int, int]] = []
    fence_start = -1
    span = text[start:end]
    for line in scan_lines(span):
        line_start = start + line.start
        line_end = min(end, line_start + len(line.text) + 1)
        if line.kind is LineKind.FENCE:
            if fence_start < 0:
                fence_start = line_start
            else:
                atoms.append((fence_start, line_end))
                fence_start = -1
            continue
        if fence_start >= 0:  # fenced code: part of the open block
            continue
        if line_end - line_start <= target:
            atoms.append((line_start, line_end))
        else:
            atoms.extend(_sentences(text, line_start, line_end, target))
    if fence_start >= 0:  # an unclosed fence runs to the chunk's end
        atoms.append((fence_start, end))
    return atoms


def _sentences(text: str, start: int, end: int, target: int) -> list[tuple[int, int]]:
    """A long line cut after each sentence end (or ". "), and at `target` inside a longer sentence."""
    pieces: list[tuple[int, int]] = []
    cursor = start
    for i in range(start, end):
        if ends_sentence(text, i, end):
            pieces.append((cursor, i + 1))
            cursor = i + 1
    if cursor < end:
        pieces.append((cursor, end))
    out: list[tuple[int, int]] = []
    for a, b in pieces:
        while b - a > target:
            out.append((a, a + target))
            a += target
        out.append((a, b))
    return out


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def chunk_windows(
    text: str,
    start: int,
    end: int,
    chunk_path: Sequence[str],
    paths: HeadingPaths,
    target: int = WINDOW_CHARS,
    overlap: int = OVERLAP_CHARS,
) -> tuple[Window, ...]:
    """The windows of the chunk `text[start:end]` (`text` is the article's normalised text)."""
    if target < 1 or overlap < 0:
        raise ValueError("target must be positive and overlap not negative")
    whole = _trimmed(text, start, end)
    if whole is None:
        return ()
    if whole[1] - whole[0] <= target:
        return (Window(0, whole[0], whole[1], text[whole[0] : whole[1]], tuple(chunk_path)),)
    atoms = _atoms(text, whole[0], whole[1], target)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(atoms):
        j, length = i + 1, atoms[i][1] - atoms[i][0]
        while j < len(atoms) and length + atoms[j][1] - atoms[j][0] <= target:
            length += atoms[j][1] - atoms[j][0]
            j += 1
        span = _trimmed(text, atoms[i][0], atoms[j - 1][1])
        if span is not None and (not spans or span[1] > spans[-1][1]):
            if spans and span[0] == spans[-1][0]:
                # the previous window began with a blank atom, so trimmed it starts where this one does
                # and this one holds it whole: keep only the longer
                spans[-1] = span
            else:
                spans.append(span)
        if j >= len(atoms):
            break
        k, kept = j, 0
        while k - 1 > i and kept + atoms[k - 1][1] - atoms[k - 1][0] <= overlap:
            k -= 1
            kept += atoms[k][1] - atoms[k][0]
        i = k
    return tuple(Window(n, a, b, text[a:b], paths.at(a)) for n, (a, b) in enumerate(spans))


def window_key(position: int) -> str:
    """`w00` for the first window of a chunk."""
    return f"w{position:02d}"
