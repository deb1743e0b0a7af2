"""The language module: every rule and word that depends on the language a text is written in.

- `script`: CJK detection and the language guess (`has_cjk`, `language_of`, `CJK_CLASS`, …).
- `segmenter`: jieba, started once per process (`init_jieba`, `init_posseg`, `idf_table`).
- `texts`: the fixed texts a reader sees (`NOT_FOUND`, …).

Script detection, jieba and `NOT_FOUND` are importable from here as before (`petrichor_core.text.lang`);
everything else from its own module. No other module writes a Chinese word or a list of question words
(`tests/text/test_lang_single_home.py`).
"""

from __future__ import annotations

from petrichor_core.text.lang.script import CJK, CJK_CLASS, CJK_RANGES, CJK_RUN, CJK_TO_LATIN_RATIO, LATIN, Language, has_cjk, language_of
from petrichor_core.text.lang.segmenter import POSSEG_TABLES, idf_table, init_jieba, init_posseg, jieba_loaded
from petrichor_core.text.lang.texts import NOT_FOUND

__all__ = [
    "CJK",
    "CJK_CLASS",
    "CJK_RANGES",
    "CJK_RUN",
    "CJK_TO_LATIN_RATIO",
    "LATIN",
    "NOT_FOUND",
    "POSSEG_TABLES",
    "Language",
    "has_cjk",
    "idf_table",
    "init_jieba",
    "init_posseg",
    "jieba_loaded",
    "language_of",
]
