"""Content tokens for overlap scoring: what the offline answerer and the term scanner compare texts by.

Kept apart from `terms` so that answering (the serving side) loads no build-side term extraction.
"""

from __future__ import annotations

import re

from petrichor_core.text.lang import CJK_RUN, has_cjk, init_jieba
from petrichor_core.text.lang.stopwords import CHINESE, ENGLISH
from petrichor_core.text.stem import stem

_LATIN_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]")


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
