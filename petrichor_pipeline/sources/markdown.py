"""A Markdown file as an article body: decoded, front matter split off, titled.

The body is kept exactly as normalised (never trimmed), because chunk and citation offsets point into it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from petrichor_core.text.markdown import headings
from petrichor_pipeline.sources.decode import decode_text
from petrichor_pipeline.sources.errors import RejectedFile
from petrichor_pipeline.sources.frontmatter import FrontMatter, parse_front_matter, split_front_matter

_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3})(\S(?:.*?\S)?)\1")


@dataclass(frozen=True, slots=True)
class MarkdownDocument:
    title: str
    content: str
    front: FrontMatter


def first_heading(markdown: str, max_level: int = 6) -> str | None:
    """The text of the first heading of level `max_level` or less (`#` is 1) outside fences (`text.markdown`).

    Emphasis markers are dropped (PDF conversion writes bold headings as `# **Title**`): a title is plain text.
    """
    for heading in headings(markdown):
        if heading.level <= max_level:
            title = _EMPHASIS.sub(r"\2", heading.title).strip()
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
