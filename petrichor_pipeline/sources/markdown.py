"""A Markdown file as an article body: decoded, front matter split off, titled.

The body is kept exactly as normalised (never trimmed), because chunk and citation offsets point into it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from petrichor_pipeline.sources.decode import decode_text
from petrichor_pipeline.sources.errors import RejectedFile
from petrichor_pipeline.sources.frontmatter import FrontMatter, parse_front_matter, split_front_matter

# The chunker's heading and fence rules (reference §1.3), except that a closing `#` run needs a space
# before it, as in CommonMark, so a title like "C# and F#" keeps its last character.
_HEADING = re.compile(r"^(#{1,6})[\t\f\r ]+(.+?)(?:[\t\f\r ]+#+)?[\t\f\r ]*$")
_FENCE = re.compile(r"^[\t\f\r ]*(```|~~~)")
_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3})(\S(?:.*?\S)?)\1")


@dataclass(frozen=True, slots=True)
class MarkdownDocument:
    title: str
    content: str
    front: FrontMatter


def first_heading(markdown: str, max_level: int = 6) -> str | None:
    """The text of the first ATX heading of level `max_level` or less (`#` is 1), skipping fenced code.

    Emphasis markers are dropped (PDF conversion writes bold headings as `# **Title**`): a title is plain text.
    """
    in_fence = False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else _HEADING.match(line)
        if match and len(match.group(1)) <= max_level:
            title = _EMPHASIS.sub(r"\2", match.group(2)).strip()
            if title.strip("#"):
                return title
    return None


def read_markdown(data: bytes, stem: str) -> MarkdownDocument:
    """Title: front matter `title`, else the first `# h1`, else the file name without its suffix."""
    text = decode_text(data)
    if not text.strip():
        raise RejectedFile("empty file")
    meta, body = split_front_matter(text)
    front = parse_front_matter(meta)
    if not body.strip():
        raise RejectedFile("no content after the front matter")
    title = front.title or first_heading(body, max_level=1) or stem
    return MarkdownDocument(title=title, content=body, front=front)
