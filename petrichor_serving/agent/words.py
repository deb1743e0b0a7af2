"""Content words of questions, headings and passages, as the agent's plans compare them.

jieba words for Chinese (single characters dropped), lower-cased Latin words with a light suffix strip,
function words (`lang.stopwords.FUNCTION_WORDS`) left out. Serving may not import the offline model's tokenizers (its boundary is the
contract, the text helpers and the model protocols), so the agent keeps this small rule of its own.
"""

from __future__ import annotations

from petrichor_core.text.lang import has_cjk
from petrichor_core.text.lang.stopwords import FUNCTION_WORDS
from petrichor_core.text.lang.suffixes import AGENT_SUFFIXES
from petrichor_core.text.stem import stem
from petrichor_core.text.tokenize import jieba_query_tokens, query_tokens


def agent_stem(word: str) -> str:
    return stem(word, AGENT_SUFFIXES)


def surface_words(text: str) -> list[tuple[str, str]]:
    """The text's content words as (surface, matching key) pairs, first occurrence first, one per key: the
    surface is the word as written (lower-cased), the key its agent stem ("series" → "seri")."""
    tokens = jieba_query_tokens(text) if has_cjk(text) else query_tokens(text)
    out: dict[str, str] = {}
    for t in tokens:
        if t in FUNCTION_WORDS or (len(t) == 1 and has_cjk(t)):
            continue
        out.setdefault(agent_stem(t) if t.isascii() else t, t)
    return [(surface, key) for key, surface in out.items()]


def content_words(text: str) -> list[str]:
    """The text's distinct content words (their matching keys), first occurrence first."""
    return [key for _, key in surface_words(text)]
