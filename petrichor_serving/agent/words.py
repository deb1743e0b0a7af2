"""Content words of questions, headings and passages, as the agent's plans compare them.

jieba words for Chinese (single characters dropped), lower-cased Latin words with a light suffix strip,
function words left out. Serving may not import the offline model's tokenizers (its boundary is the
contract, the text helpers and the model protocols), so the agent keeps this small rule of its own.
"""

from __future__ import annotations

from petrichor_core.text.lang import has_cjk
from petrichor_core.text.stem import stem
from petrichor_core.text.tokenize import jieba_query_tokens, query_tokens

FUNCTION_WORDS = frozenset(
    (
        "a an the of in on at for to and or with by from as is are was were be been being do does did what which who whom whose "
        "how why when where this that these those it its your my our their i me we you they can could should would will shall "
        "may might must have has had there here about into than then so if not no any all some me"
    ).split()
) | frozenset("的 了 吗 呢 是 在 和 与 及 如何 怎么 怎样 什么 哪些 哪个 哪里 为什么 需要 可以 多少 几个 几种 是否 能否 请问".split())
AGENT_SUFFIXES = ("ing", "ed", "es", "s")
"""The agent's stemming keeps a final "e": heading words are matched whole more often than inflected."""


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
