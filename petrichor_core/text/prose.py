"""Sentences with offsets and plain-text helpers: the offline model's and serving's offline answers'.

Sentences keep their offsets into the source text, so whatever is quoted or summarised
from them is a verbatim substring of what it was given. Headings and fences are `text.markdown`'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from petrichor_core.text.lang import CJK, LATIN, has_cjk
from petrichor_core.text.lang.numbers import SECTION_NUMBER
from petrichor_core.text.markdown import LineKind, drop_code_blocks, is_table_rule, scan_lines

_CELL_SEP = re.compile(r"\t+|(?<!\\)\|")
_SENTENCE_END = re.compile(r"(?:[。！？；]+|[.!?;]+(?=\s|$))[”’\"'』」）)]*")
_MARKERS = re.compile(r"^(?:[-*+][ \t]+|\d{1,3}[.)、][ \t]*|>[ \t]*|\[[ xX]\][ \t]+)+")


def strip_section_number(heading: str) -> str:
    """ "5.1 参数" → "参数", "三、部署" → "部署": numbering is layout, not the topic's name."""
    return SECTION_NUMBER.sub("", heading).strip()


@dataclass(frozen=True)
class Sentence:
    """A sentence (or table cell, or list item) as a verbatim slice `source[start:end]`."""

    text: str
    start: int
    end: int
    paragraph: int
    heading_path: tuple[str, ...]
    code: bool = False


@lru_cache(maxsize=64)
def split_sentences(markdown: str, include_code: bool = False) -> tuple[Sentence, ...]:
    """Prose sentences of a Markdown text with offsets, the heading path above each, and paragraph ids.

    Headings are not sentences (they only set the path); fenced code is skipped unless `include_code`,
    in which case each non-blank code line becomes one sentence. Cached: one article's document is
    split once for extraction and every page batch, not once per call.
    """
    out: list[Sentence] = []
    stack: list[tuple[int, str]] = []
    paragraph = 0
    for scanned in scan_lines(markdown):
        line, line_start = scanned.text, scanned.start
        path = tuple(title for _, title in stack)
        if scanned.kind is LineKind.FENCE:
            paragraph += 1
            continue
        if scanned.kind is LineKind.CODE:
            if include_code and line.strip():
                lead = len(line) - len(line.lstrip())
                text = line.strip()
                out.append(Sentence(text, line_start + lead, line_start + lead + len(text), paragraph, path, True))
            continue
        if not line.strip():
            paragraph += 1
            continue
        if scanned.heading:
            while stack and stack[-1][0] >= scanned.level:
                stack.pop()
            stack.append((scanned.level, scanned.title))
            paragraph += 1
            continue
        if is_table_rule(line):
            continue
        for start, end in _cells(line):
            for s, e in _sentence_spans(line, start, end):
                text = line[s:e]
                if informative(text):
                    out.append(Sentence(text, line_start + s, line_start + e, paragraph, path))
    return tuple(out)


def _cells(line: str) -> Iterator[tuple[int, int]]:
    pos = 0
    for sep in _CELL_SEP.finditer(line):
        yield pos, sep.start()
        pos = sep.end()
    yield pos, len(line)


def _sentence_spans(line: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Sentence spans inside line[start:end], trimmed of whitespace and list/quote markers."""
    piece_start = start
    cuts = [m.end() + start for m in _SENTENCE_END.finditer(line[start:end])]
    for cut in [*cuts, end]:
        s, e = piece_start, cut
        piece_start = cut
        while s < e and line[s].isspace():
            s += 1
        marker = _MARKERS.match(line[s:e])
        if marker:
            s += marker.end()
        while e > s and line[e - 1].isspace():
            e -= 1
        if e > s:
            yield s, e


def informative(text: str) -> bool:
    """At least two letters or Han characters: skips bare numbers, symbols and table rules."""
    return len(CJK.findall(text)) + len(LATIN.findall(text)) >= 2


_CODE_LIKE = re.compile(r"-->|==>|\[\"|<br\s*/?>|^\w+\s*[\[(]\"|[{}]\s*$|^\s*[$]\s|\w\(.*\)\s*$")


@lru_cache(maxsize=16384)
def is_prose(text: str) -> bool:
    """A real sentence rather than a label, a table cell fragment or a line of unfenced code.

    Cached: extraction and page generation ask it about the same sentences once per term and page."""
    if _CODE_LIKE.search(text):
        return False
    if has_cjk(text):
        return len(CJK.findall(text)) >= 8
    return len(re.findall(r"[A-Za-z]+", text)) >= 5


_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_WIKI_LINK = re.compile(r"\[\[([^\]|]+)\|([^\]]+)\]\]")
_TAG = re.compile(r"<[^>\n]{1,200}>")
_MARKUP = re.compile(r"[#>*`~|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def drop_headings(markdown: str) -> str:
    """The text without its heading lines (a section summary should not restate the title)."""
    return "\n".join(line.text for line in scan_lines(markdown) if not line.heading)


def plain_text(markdown: str) -> str:
    """Markdown with code blocks, images, link targets, tags and markup symbols removed; spaces collapsed."""
    text = drop_code_blocks(markdown)
    text = _IMAGE.sub(" ", text)
    text = _WIKI_LINK.sub(r"\2", text)
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub(" ", text)
    text = _MARKUP.sub("", text)
    text = re.sub(r"^[ \t]*(?:[-+]|\d{1,3}[.)])[ \t]+", "", text, flags=re.MULTILINE)
    return re.sub(r"\s+", " ", text).strip()


def cut(text: str, limit: int) -> str:
    """`text` within `limit` code points, ending in "…" when shortened (at a word boundary for Latin)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if not has_cjk(head[-1:]) and " " in head[limit // 2 :]:
        head = head[: head.rindex(" ")]
    return head.rstrip(" ,;:，；：、") + "…"
