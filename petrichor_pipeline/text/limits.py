"""Length caps on what one article can put into every row, response and prompt that names it.

An article's title and headings are repeated in each of its chunks' heading paths, index texts, search
hits and citations, so an uncapped 2 MB heading line would be copied into every one of them and make the
build and each search cost the article's size times its chunk count. Capping them at the source keeps
every step linear in the input. Counted in code points (`len`), like the chunk budgets.
"""

from __future__ import annotations

MAX_TITLE_CHARS = 200
"""An article title (front matter `title`, first `# h1`, or file name)."""
MAX_HEADING_CHARS = 200
"""One heading's text, wherever `text.markdown` reads it."""
MAX_HEADING_LEVELS = 6
MAX_HEADING_PATH_CHARS = MAX_HEADING_LEVELS * MAX_HEADING_CHARS
"""A heading path holds at most one heading per level, so this bound follows from the two above."""
SNIPPET_MAX_CHARS = 220
"""A search hit's snippet (reference: summary at most 220 runes + `…`)."""
ELLIPSIS = "…"


def capped(text: str, limit: int) -> str:
    """`text` cut to `limit` code points (trailing space dropped) plus `…` when it is longer."""
    return text if len(text) <= limit else text[:limit].rstrip() + ELLIPSIS
