"""`[[pageKey|显示名]]` links inside page bodies: finding them and keeping only those that resolve."""

from __future__ import annotations

import re
from typing import Callable

WIKI_LINK = re.compile(r"\[\[([^\[\]|\n]+)(?:\|([^\[\]\n]+))?\]\]")


def wiki_link(page_key: str, name: str) -> str:
    return f"[[{page_key}|{name}]]"


def linked_keys(markdown: str) -> list[str]:
    """The target keys of the links in `markdown`, in order of appearance."""
    return [key.strip() for key, _ in WIKI_LINK.findall(markdown)] if "[[" in markdown else []


def resolve_links(markdown: str, resolve: Callable[[str], str | None]) -> str:
    """Rewrite each link to the key `resolve` returns, or to its plain display text when it returns None.

    A link to a page that does not exist would read as a broken promise; its words stay in the text.
    """

    def replace(m: re.Match[str]) -> str:
        raw, label = m.group(1).strip(), (m.group(2) or "").strip()
        key = resolve(raw)
        if key is None:
            return label or raw
        return wiki_link(key, label or raw)

    return WIKI_LINK.sub(replace, markdown)
