"""Line-level Markdown structure shared by the guide cleaner and the PageIndex tree.

The patterns are the chunker's (reference §1.3) with `\\s` written out as ASCII whitespace, as RE2 reads
it: a heading separated by U+3000 is not a heading in the reference, so it is not one here either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

HEADING_RE = re.compile(r"^(#{1,6})[\t\n\f\r ]+(.+?)[\t\n\f\r ]*#*[\t\n\f\r ]*$")
FENCE_RE = re.compile(r"^[\t\n\f\r ]*(```|~~~)")


@dataclass(frozen=True)
class Line:
    index: int
    text: str
    level: int = 0
    """Heading level 1–6, or 0 for a body line (fence lines and lines inside fences included)."""
    title: str = ""


def scan_lines(lines: list[str]) -> Iterator[Line]:
    """Classify lines as headings or body; any ``` or ~~~ line toggles the fence, whatever its kind."""
    in_fence = False
    for i, text in enumerate(lines):
        if FENCE_RE.match(text):
            in_fence = not in_fence
            yield Line(i, text)
            continue
        m = None if in_fence else HEADING_RE.match(text)
        yield Line(i, text, len(m.group(1)), m.group(2).strip()) if m else Line(i, text)
