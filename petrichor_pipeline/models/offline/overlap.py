"""Content tokens for overlap scoring: what the offline answerer and the term scanner compare texts by.

Kept apart from `terms` so that answering (the serving side) loads no build-side term extraction.
"""

from __future__ import annotations

import re
from functools import lru_cache

from petrichor_pipeline.models.offline.stopwords import CHINESE, ENGLISH
from petrichor_pipeline.text.lang import CJK_RUN, has_cjk, init_jieba

_LATIN_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]")
_SUFFIXES = ("ing", "ed", "es", "s", "e")


def search_tokens(text: str) -> list[str]:
    """Content tokens for overlap scoring: jieba words for Han runs, light-stemmed words for Latin."""
    lowered = text.lower()
    out: list[str] = []
    if has_cjk(lowered):
        jieba = init_jieba()
        for run in CJK_RUN.findall(lowered):
            out.extend(w for w in jieba.lcut_for_search(run) if len(w) >= 2 and w not in CHINESE)
    for word in _LATIN_TOKEN.findall(lowered):
        if len(word) >= 2 and word not in ENGLISH:
            out.append(stem(word))
    return out


@lru_cache(maxsize=1 << 14)
def stem(word: str) -> str:
    if not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word
