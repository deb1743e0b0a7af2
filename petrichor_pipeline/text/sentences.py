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


def sentences(text: str) -> list[str]:
    """The sentences and lines of `text`, end marks dropped, blank pieces left out."""
    return [s for s in _SPLIT.split(text) if s.strip()]


def mark_sentence_ends(text: str, mark: str = "\n") -> str:
    """`text` with each run of sentence ends (and line breaks) replaced by `mark`: one pass, for callers
    that transform the whole text before splitting it at `mark`."""
    return _SPLIT.sub(mark, text)
