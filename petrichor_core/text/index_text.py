"""The text that is embedded and lexically indexed for a chunk or a generated question.

The article title and the first two heading levels go in front of the body because a chunk is often just
commands or a table whose meaning lives in its headings; without them such a chunk cannot be recalled.
"""

from __future__ import annotations

from collections.abc import Sequence

INDEX_TEXT_MAX_CHARS = 4000


def index_text(article_title: str, heading_path: Sequence[str], body: str, limit: int = INDEX_TEXT_MAX_CHARS) -> str:
    """`title`, `h1`, `h2` (trimmed, repeats and blanks dropped) and the trimmed body, one per line, cut to
    `limit` code points."""
    parts: list[str] = []
    for part in (article_title, *heading_path[:2]):
        part = part.strip()
        if part and part not in parts:
            parts.append(part)
    body = body.strip()
    if body:
        parts.append(body)
    return "\n".join(parts)[:limit]
