"""Length caps on what one article can put into every row, response and prompt that names it.

An article's title and headings are repeated in each of its chunks' heading paths, index texts, search
hits and citations, so an uncapped 2 MB heading line would be copied into every one of them and make the
build and each search cost the article's size times its chunk count. Capping them at the source keeps
every step linear in the input. Counted in code points (`len`), like the chunk budgets.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

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


MAX_EMBEDDED = {"chunk": 128, "window": 512}
"""Of one article, how many chunks and windows have their index texts embedded: the first of each in text
order. Embedding is most of a build's time and grows with an article's length: one 5 MB line (13,890 texts)
held every publish back for hours. With these caps one file adds at most 640 texts to embed; the text past
them stays in its chunks and windows, found by keyword search and read in full, and the windows step warns
with how much was left out. The caps sit well above ordinary long documents, which keep all their vectors:
the windows reach about 210,000 characters of text (a window moves on by about 410), the chunks about
370,000 (a full chunk moves on by 2,880); a 147 KB product guide has 336 windows and 85 chunks."""

Row = TypeVar("Row", bound=Mapping[str, Any])


def embedded_rows(kind: str, rows: Sequence[Row]) -> list[Row]:
    """The rows of the vector `kind` (`chunk`, `window`, `question`) whose texts are embedded: of a kind in
    `MAX_EMBEDDED`, each article's first rows by `start` (given order kept); of another, every row."""
    limit = MAX_EMBEDDED.get(kind)
    if limit is None:
        return list(rows)
    by_article: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_article[row["article_id"]].append(i)
    dropped: set[int] = set()
    for indices in by_article.values():
        if len(indices) > limit:
            dropped.update(sorted(indices, key=lambda i: (rows[i]["start"], i))[limit:])
    return [row for i, row in enumerate(rows) if i not in dropped]
