"""A light English stemmer: enough for overlap scoring between a question and a passage, no dictionary.

One rule for the build's offline model and the serving agent; they differ only in which suffixes they strip
(`lang.suffixes`: the agent's list has no bare "e", so a heading word like "release" stays whole there).
"""

from __future__ import annotations

from functools import lru_cache

from petrichor_core.text.lang.suffixes import STEM_SUFFIXES


@lru_cache(maxsize=1 << 15)
def stem(word: str, suffixes: tuple[str, ...] = STEM_SUFFIXES) -> str:
    """`word` without the first matching suffix, keeping at least three letters; non-alphabetic words stay."""
    if not word.isalpha():
        return word
    for suffix in suffixes:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word
