"""The knowledge base's compile guide, cleaned before it joins the system prompts.

Authors keep notes in HTML comments and leave template headings unfilled; neither should reach a model,
where an empty heading reads as an instruction with nothing behind it.
"""

from __future__ import annotations

import re

from petrichor_core.text.markdown import scan_lines

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_BLANK_RUN = re.compile(r"\n{3,}")


def prepare_guide(raw_markdown: str) -> str:
    """The guide without HTML comments or heading-only sections, blank runs collapsed, trimmed.

    A heading is *heading-only* when no body line (a non-blank line that is not a heading) appears
    between it and the next heading of the same or a higher level (or the end). So a parent heading
    whose subsections are all empty goes with them, and one with any filled subsection stays. Lines in
    code fences are body lines. Comments are removed first, so a section holding only a comment is empty.
    """
    text = _COMMENT.sub("", raw_markdown.replace("\r\n", "\n").replace("\r", "\n"))
    lines = list(scan_lines(text))
    dropped: set[int] = set()
    for pos, line in enumerate(lines):
        if not line.level:
            continue
        has_body = False
        for later in lines[pos + 1 :]:
            if later.level and later.level <= line.level:
                break
            if not later.level and later.text.strip():
                has_body = True
                break
        if not has_body:
            dropped.add(line.line_no)
    kept = ["" if not ln.text.strip() else ln.text.rstrip() for ln in lines if ln.line_no not in dropped]
    return _BLANK_RUN.sub("\n\n", "\n".join(kept)).strip()
