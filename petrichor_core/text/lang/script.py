"""Which script a text is written in, and which language it reads as.

The language decides which fixed text a reader gets and how the offline model shapes its output, so one
rule decides it everywhere: a text is Chinese when Han characters carry it, judged against its Latin
letters, so that identifiers inside Chinese prose (`使用 PETRICHOR_DATA 环境变量`) do not flip it.
"""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["zh", "en"]

CJK_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
"""CJK ideographs (first and last code point): Extension A, the unified block and the compatibility block."""
CJK_CLASS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES)
"""The same ranges as a regex class body."""
CJK = re.compile(f"[{CJK_CLASS}]")
CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
LATIN = re.compile(r"[A-Za-z]")
CJK_TO_LATIN_RATIO = 3
"""One Han character weighs as much as three Latin letters in the language guess."""


def has_cjk(text: str) -> bool:
    return CJK.search(text) is not None


def language_of(text: str) -> Language:
    """ "zh" when the text has Han characters and they outweigh its Latin letters 1:3, else "en"."""
    cjk = len(CJK.findall(text))
    return "zh" if cjk and cjk * CJK_TO_LATIN_RATIO >= len(LATIN.findall(text)) else "en"
