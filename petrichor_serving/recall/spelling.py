"""Misspelled query words matched to the snapshot's vocabulary ("containr registy" → container registry).

A Latin query word no indexed text holds contributes nothing to BM25 and nothing to the rerank's term
matches, so a typo hands the search to the vector routes alone. Each such word (letters only, at least
`MIN_LENGTH`) is joined by the indexed word one edit away (a transposition counting one: OSA distance via
rapidfuzz) with the same first letter, the one most rows hold on a tie; the word itself stays. Words the
vocabulary holds are never touched, so a correct query searches exactly as before. An indexed word that is
the unknown one with another English ending (leader/leaders, indicates/indicated) is no typo's target: on
multi-document news questions those swaps cost all-gold recall@5 (docs/evaluation.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz.distance import OSA
from rapidfuzz.process import extract

from petrichor_core.text.lang.suffixes import SPELLING_SUFFIXES

MIN_LENGTH = 4
_WORD = re.compile(r"[a-z]+")


@dataclass
class Vocabulary:
    """The Latin words of one BM25 index by length, with how many rows hold each; built on first use."""

    vocab: dict[str, int]
    indptr: np.ndarray
    _by_length: dict[int, tuple[list[str], list[int]]] | None = field(default=None, repr=False)

    def _groups(self) -> dict[int, tuple[list[str], list[int]]]:
        if self._by_length is None:
            groups: dict[int, tuple[list[str], list[int]]] = {}
            for word, t in self.vocab.items():
                if len(word) >= MIN_LENGTH - 1 and _WORD.fullmatch(word):
                    words, dfs = groups.setdefault(len(word), ([], []))
                    words.append(word)
                    dfs.append(int(self.indptr[t + 1] - self.indptr[t]))
            self._by_length = groups
        return self._by_length

    def nearest(self, word: str) -> str | None:
        """The indexed word one edit from `word`, same first letter and not an inflection of it, that most
        rows hold; None when there is none."""
        best: tuple[int, int, str] | None = None
        groups = self._groups()
        for length in (len(word) - 1, len(word), len(word) + 1):
            words, dfs = groups.get(length, ((), ()))
            for found, distance, i in extract(word, words, scorer=OSA.distance, score_cutoff=1, limit=None):
                if found[0] != word[0] or _inflection(word, found):
                    continue
                key = (distance, -dfs[i], found)
                if best is None or key < best:
                    best = key
        return best[2] if best else None


def _inflection(a: str, b: str) -> bool:
    """Whether one word is the other plus an English ending, or both share a stem (indicates/indicated)."""
    for x, y in ((a, b), (b, a)):
        if any(x == y + s for s in SPELLING_SUFFIXES):
            return True
    stem = a[: min(len(a), len(b)) - 2]
    endings = (*SPELLING_SUFFIXES, "", "e", "y")
    return len(stem) >= 3 and b.startswith(stem) and a[len(stem) :] in endings and b[len(stem) :] in endings


def corrected(terms: Sequence[str], vocabulary: Vocabulary) -> list[str]:
    """`terms` with the nearest indexed word added after each unknown Latin word."""
    out: list[str] = []
    for term in terms:
        out.append(term)
        if len(term) >= MIN_LENGTH and term not in vocabulary.vocab and _WORD.fullmatch(term):
            near = vocabulary.nearest(term)
            if near is not None and near not in terms:
                out.append(near)
    return out
