"""Where a sentence ends: one rule for the chunker's break points, the child windows' cuts and the rerank's
best sentence.

A sentence ends after a full-width or ASCII 。！？；!?; mark, or after a `.` followed by a space (so `v1.8`,
`example.com` and `3.14` stay whole). A line break ends one too where text is split into sentences to read.
"""

from __future__ import annotations

import re

SENTENCE_ENDS = frozenset("。！？；!?;")

_SPLIT = re.compile("[" + re.escape("".join(sorted(SENTENCE_ENDS))) + r"\n]+|\.(?= )")


def ends_sentence(text: str, i: int, end: int) -> bool:
    """Whether `text[i]` ends a sentence in `text[:end]`."""
    ch = text[i]
    return ch in SENTENCE_ENDS or (ch == "." and i + 1 < end and text[i + 1] == " ")


def mark_sentence_ends(text: str, mark: str = "\n") -> str:
    """`text` with each run of sentence ends (and line breaks) replaced by `mark`, end marks dropped: split
    the result at `mark` for the sentences, after transforming the whole text in one pass if need be."""
    return _SPLIT.sub(mark, text)
