"""Section summaries for the PageIndex tree: one extractive sentence per node."""

from __future__ import annotations

import re

from petrichor_core.models.protocols import TreeNodeText
from petrichor_core.text.lang import has_cjk, language_of
from petrichor_core.text.prose import cut, drop_headings, informative, plain_text

TREE_SUMMARY_MAX = {"zh": 60, "en": 160}

_PLAIN_SENTENCE = re.compile(r"[^。！？；!?;]+?(?:[。！？；]|[.!?;](?=\s|$)|$)")


def node_summary(node: TreeNodeText) -> str:
    """One extractive sentence for a section (≤ 60 code points in Chinese, ≤ 160 in English); "" when empty."""
    text = plain_text(drop_headings(node.content))
    if not text:
        return ""
    limit = TREE_SUMMARY_MAX[language_of(text)]
    parts = [m.group(0).strip() for m in _PLAIN_SENTENCE.finditer(text) if informative(m.group(0))]
    summary = parts[0] if parts else text
    for extra in parts[1:]:  # a very short lead sentence ("Overview.") takes the next one along
        if len(summary) >= limit // 3 or len(summary) + len(extra) + 1 > limit:
            break
        summary = f"{summary} {extra}" if not has_cjk(summary) else summary + extra
    return cut(summary, limit)
