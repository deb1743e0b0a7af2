"""Lexical tokenizers for recall: BM25, rerank, similarity and the wiki route all share them.

`bigram` is the default recall tokenizer: lowercase, split on whitespace, punctuation
and symbols, keep latin/digit runs of two or more code points, and cut every run of CJK ideographs into
overlapping two-character windows (a one-character run stays whole). A plain regex tokenizer would turn a
whole Chinese sentence into one token; bigrams need no dictionary and match any substring query.

Both read MediaWiki language-variant markup (`-{…}-`, left in text taken from Chinese Wikipedia) as the text
it marks: `郭-{麐}-` is the name 郭麐, so a query naming it matches its bigram.

`jieba` keeps the same latin rules but segments CJK runs with jieba's search mode, which yields real words
plus their sub-words. It is an alternative for corpora where bigram noise hurts; the dictionary is loaded
once per process by `text.lang.init_jieba`, lazily or at start-up.

The bigram tokenizer is one precompiled regex `findall`: no Python code runs per character or per token.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain

import numpy as np

from petrichor_core.text.lang import CJK_CLASS as _CJK
from petrichor_core.text.lang import CJK_RANGES, init_jieba

_BMP_END = 0x10000


def _punctuation_and_symbols(lo: int, hi: int) -> str:
    """A regex class body of the code points in [lo, hi) of category P* or S* (Go's IsPunct / IsSymbol)."""
    ranges: list[tuple[int, int]] = []
    start = prev = -1
    category = unicodedata.category
    for cp in range(lo, hi):
        if category(chr(cp))[0] in "PS":
            if start < 0:
                start = cp
            prev = cp
        elif start >= 0:
            ranges.append((start, prev))
            start = -1
    if start >= 0:
        ranges.append((start, prev))
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


# Split characters of the Basic Multilingual Plane only: a class that also lists astral ranges makes `re`
# test every character against them one by one, which halves tokenizer speed. Astral punctuation and
# symbols (emoji, mostly) are rare and are turned into spaces first, only when the text has any.
_SPLIT = " \t\n\r" + _punctuation_and_symbols(0, _BMP_END)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")

# One match per token, the token in group 1 (so `findall` returns the list without Python per token):
#   a CJK character followed by another      -> the two-character window, one character consumed;
#   a CJK character alone in its run         -> that character;
#   a latin run (neither CJK nor split) >= 2 -> the run, all of it consumed.
# The last character of a longer CJK run and one-character latin runs match nothing and are skipped.
_TOKENS = re.compile(f"(?=([{_CJK}]{{2}}|(?<![{_CJK}])[{_CJK}](?![{_CJK}])|[^{_CJK}{_SPLIT}]{{2,}}))(?:[{_CJK}]|[^{_CJK}{_SPLIT}]+)")
# CJK runs and latin runs (>= 2) for the jieba tokenizer, which segments each CJK run itself.
_RUNS = re.compile(f"([{_CJK}]+)|[^{_CJK}{_SPLIT}]{{2,}}")
_LATIN_RUNS = re.compile(f"[^{_CJK}{_SPLIT}]{{2,}}")
_ANY_CJK = re.compile(f"[{_CJK}]")


# `-{X}-` around text with a CJK character, or empty; `zh-xx:` labels name the variants of `-{zh-hans:A;zh-hk:B}-`.
# Latin content is left alone: `backstage-{cr-name}-claim` is a template placeholder, not markup.
_WIKI_VARIANT = re.compile(f"-\\{{([^{{}}]*[{_CJK}][^{{}}]*|)\\}}-")
_VARIANT_LABEL = re.compile(r"^\s*zh(?:-[a-z]+)?\s*:\s*", re.IGNORECASE)


def _variant_text(match: re.Match[str]) -> str:
    """The marked text; for labelled variants, each distinct variant once, separated by spaces."""
    body = match.group(1)
    parts = [p for p in body.split(";") if p.strip()]
    if not parts or not all(_VARIANT_LABEL.match(p) for p in parts):
        return body
    return " ".join(dict.fromkeys(_VARIANT_LABEL.sub("", p).strip() for p in parts))


@functools.cache
def _astral_split() -> re.Pattern[str]:
    return re.compile(f"[{_punctuation_and_symbols(_BMP_END, sys.maxunicode + 1)}]")


def warm_tokenizer() -> None:
    """Build the astral punctuation class now: scanning a million code points takes about 0.4 s, which a
    server should pay at start-up, not in the first request whose text holds an emoji."""
    _astral_split()


def _prepare(text: str) -> str:
    text = text.strip().lower()
    if "-{" in text:
        text = _WIKI_VARIANT.sub(_variant_text, text)
    if _ASTRAL.search(text):
        text = _astral_split().sub(" ", text)
    return text


def index_tokens(text: str) -> list[str]:
    """Every token in order of appearance, repeats kept (term frequencies and lengths count them)."""
    return _TOKENS.findall(_prepare(text))


def line_pieces(text: str) -> list[str] | None:
    """One piece per line of `text` whose tokens (by either tokenizer) together are the text's tokens, so
    the counts of an edited text follow from its earlier counts by tokenising only the lines that changed.
    Each line is fenced by a split character: alone it must not be stripped, as inside the text it is not
    (only the text's ends are). None when the text has variant markup (`-{…}-`), which may span lines."""
    if "-{" in text:
        return None
    return _fenced(text.strip().split("\n"))


def _fenced(lines: list[str]) -> list[str]:
    return [f".{line}." for line in lines]


def changed_line_pieces(old: str, new: str) -> tuple[list[str], list[str]] | None:
    """`line_pieces` of `old` and of `new` less the lines they share at their start and at their end: the
    multisets differ by exactly what the whole texts' pieces differ by. A hub page of the wiki is megabytes
    of lines of which an edit changes a few, and cutting all of them costs more than tokenising the rest.
    None when either text has variant markup (as `line_pieces`)."""
    if "-{" in old or "-{" in new:
        return None
    old, new = old.strip(), new.strip()
    if old == new:
        return [], []
    start = old.rfind("\n", 0, _common_prefix(old, new)) + 1  # the lines before it are whole and alike
    rest_old, rest_new = old[start:], new[start:]
    shared = _common_suffix(rest_old, rest_new)
    newline = rest_old.find("\n", len(rest_old) - shared) if shared else -1
    if newline >= 0:  # the lines after that newline are whole and alike
        cut = len(rest_old) - newline
        rest_old, rest_new = rest_old[: len(rest_old) - cut], rest_new[: len(rest_new) - cut]
    return _fenced(rest_old.split("\n")), _fenced(rest_new.split("\n"))


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix, found by halving: each comparison is of slices (C speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str) -> int:
    """The length of the longest common suffix (`_common_prefix` from the end)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def query_tokens(text: str) -> list[str]:
    """The distinct tokens of a query, first occurrence first."""
    return list(dict.fromkeys(_TOKENS.findall(_prepare(text))))


def token_set(text: str) -> frozenset[str | int]:
    """The set of `query_tokens(text)`, one to one: a CJK token is the int of its code points (`a` or
    `a << 21 | b`), a latin token stays a string. Set sizes and overlaps are those of the token sets, so
    similarity tests give the same answers, at about half the cost: numpy finds the CJK windows."""
    text = _prepare(text)
    latin = _LATIN_RUNS.findall(text)
    if not _ANY_CJK.search(text):
        return frozenset(latin)
    cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    (lo, hi), *rest = CJK_RANGES
    cjk = (cps >= lo) & (cps <= hi)
    for lo, hi in rest:
        cjk |= (cps >= lo) & (cps <= hi)
    pairs = cjk[:-1] & cjk[1:]
    alone = cjk.copy()
    alone[1:] &= ~cjk[:-1]
    alone[:-1] &= ~cjk[1:]
    codes = np.concatenate(((cps[:-1][pairs] << 21) | cps[1:][pairs], cps[alone])).tolist()
    return frozenset(chain(codes, latin)) if latin else frozenset(codes)


# ------------------------------------------------------------------------------------------------ jieba


def jieba_index_tokens(text: str) -> list[str]:
    """Like `index_tokens`, with CJK runs segmented by `jieba.lcut_for_search` instead of bigrams."""
    jieba = init_jieba()
    out: list[str] = []
    for match in _RUNS.finditer(_prepare(text)):
        run = match.group()
        if match.lastindex and len(run) > 1:
            out.extend(w for w in jieba.lcut_for_search(run) if w.strip())
        else:
            out.append(run)
    return out


def jieba_query_tokens(text: str) -> list[str]:
    return list(dict.fromkeys(jieba_index_tokens(text)))


def jieba_token_set(text: str) -> frozenset[str]:
    return frozenset(jieba_index_tokens(text))


REVISION = 2
"""Raised whenever a change here can move a token: stored postings of another revision are not reused."""


@dataclass(frozen=True)
class Tokenizer:
    """A named tokenizer: `index` keeps repeats (for term counts), `query` dedupes (for query terms),
    `token_set` is for set similarity (its members need not be the tokens, only one to one with them)."""

    name: str
    index: Callable[[str], list[str]]
    query: Callable[[str], list[str]]
    token_set: Callable[[str], frozenset]
    revision: int = REVISION

    @property
    def key(self) -> str:
        """Name and revision: what cached and stored postings record they were built with."""
        return f"{self.name}/{self.revision}"


DEFAULT_TOKENIZER = "bigram"
"""The tokenizer of a build that names none, and of a snapshot whose manifest records none (every snapshot
published before the manifest recorded it was tokenised with bigrams)."""

TOKENIZERS: dict[str, Tokenizer] = {
    "bigram": Tokenizer("bigram", index_tokens, query_tokens, token_set),
    "jieba": Tokenizer("jieba", jieba_index_tokens, jieba_query_tokens, jieba_token_set),
}


def get_tokenizer(name: str) -> Tokenizer:
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r}; expected one of {sorted(TOKENIZERS)}") from None
