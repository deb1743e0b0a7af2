"""Small string rules the knowledge build applies everywhere.

Every length here is counted in Unicode code points, so Chinese and English text get the same limits.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable


def cut(text: str, limit: int) -> str:
    """The first `limit` code points of `text`."""
    return text[:limit]


def normalize_string_list(values: object, limit: int) -> list[str]:
    """`normalizeStringList`: trim, drop empty strings, non-strings and repeats, keep the first `limit`."""
    if not isinstance(values, (list, tuple)):
        return []
    out: list[str] = []
    for value in values:
        if not isinstance(value, str):
            continue
        item = value.strip()
        if item and item not in out:
            out.append(item)
            if len(out) >= limit:
                break
    return out


def capped_warnings(warnings: Iterable[str], limit: int = 5) -> tuple[str, ...]:
    """Warnings deduplicated in first-seen order and capped, so one bad article cannot flood a report."""
    out: list[str] = []
    for warning in warnings:
        if warning and warning not in out:
            out.append(warning)
    return tuple(out[:limit])


def name_identity(name: str) -> str:
    """`lower(name)` without whitespace, punctuation or symbols: two spellings of one name compare equal."""
    lowered = name.lower()
    kept = "".join(ch for ch in lowered if not ch.isspace() and unicodedata.category(ch)[0] not in "PS")
    return kept or lowered.strip()


def is_cjk(ch: str) -> bool:
    """Han (incl. extension A and compatibility), kana or Hangul: one character is one word."""
    cp = ord(ch)
    return 0x3400 <= cp <= 0x4DBF or 0x4E00 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0x3040 <= cp <= 0x30FF or 0xAC00 <= cp <= 0xD7AF
