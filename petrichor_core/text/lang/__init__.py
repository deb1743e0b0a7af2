"""The language module: every rule, word and text that depends on the language a text is written in.

- `script`: CJK detection and the language guess (`has_cjk`, `language_of`, `CJK_CLASS`, …).
- `segmenter`: jieba, started once per process (`init_jieba`, `init_posseg`, `idf_table`).
- `stopwords`: function words, English and Chinese (the offline model's, the agent's, anaphors).
- `question_words`: how questions are worded: question words and the patterns that say what is asked.
- `numbers`: numerals and their values, measure words, units, magnitudes, currencies, years and dates.
- `cues`: cue words in running text (reason, negation, definition, alias, words addressed to the assistant…).
- `suffixes`: the English suffix lists of light stemming and spelling correction.
- `texts`: the fixed texts a reader sees (`NOT_FOUND`, the answers' lines, the wiki's headings, …).

Script detection, jieba and `NOT_FOUND` are importable from here as before (`petrichor_core.text.lang`);
everything else from its own module. Outside this package no string literal holds a Han character and no
module lists English question words, but for the exceptions `tests/text/test_lang_single_home.py` names.
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
