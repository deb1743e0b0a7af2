"""The whole article as extraction and page generation see it, and its local (model-free) summary.

One context for the whole document rather than per-chunk extraction, so entities
are judged by their coverage across the article; an over-long article keeps its head and its tail.
"""

from __future__ import annotations

import re

from petrichor_core.text.lang.texts import OMISSION_MARKER
from petrichor_core.text.markdown import drop_code_blocks
from petrichor_pipeline.knowledge.wiki_links import WIKI_LINK

DOCUMENT_MAX_CHARS = 72000
HEAD_SHARE_PERCENT = 62
SUMMARY_MAX_CHARS = 800
LOCAL_SUMMARY_CHARS = 260

_NEWLINES = re.compile(r"\r\n?")
_TAG = re.compile(r"<[^>\n]+>")
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
_SYMBOLS = re.compile(r"[-#>*_`~|]")
_SPACES = re.compile(r"\s+")


def whole_document_context(markdown: str, max_chars: int = DOCUMENT_MAX_CHARS) -> str:
    """`buildWholeDocumentContext`: the article, or its first 62% and last 38% around an omission marker."""
    text = _NEWLINES.sub("\n", markdown).strip()
    if len(text) <= max_chars:
        return text
    head = max_chars * HEAD_SHARE_PERCENT // 100
    return text[:head] + OMISSION_MARKER + text[len(text) - (max_chars - head) :]


def plain_text(markdown: str) -> str:
    """Markdown reduced to its readable words on one line: no code blocks, tags, images or link syntax."""
    text = drop_code_blocks(markdown)
    text = _TAG.sub(" ", text)
    text = _IMAGE.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    text = WIKI_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _SYMBOLS.sub("", text)
    return _SPACES.sub(" ", text).strip()


def clip(text: str, limit: int, ellipsis: str) -> str:
    """`text` cut to `limit` code points, marked with `ellipsis` when something was cut."""
    return text if len(text) <= limit else text[:limit] + ellipsis


def local_document_summary(markdown: str) -> str:
    """`localDocumentSummary`: the article's opening words, when the model gave no summary."""
    return clip(plain_text(markdown), LOCAL_SUMMARY_CHARS, "…")
