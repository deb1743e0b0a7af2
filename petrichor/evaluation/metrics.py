"""Retrieval and answer metrics, as pure functions over ranked lists.

Document level: a question's ranked documents are the retrieved items mapped to their documents, repeats
dropped, order kept. `gold_match="any"` needs one gold document within the cut-off; `"all"` needs every one
(and MRR then counts the rank at which the last gold document arrived). All-gold figures (`cover_rank`) need
one document of every group within the cut-off: each gold document its own group for `gold_match: all`,
the set's own groups for `gold_doc_groups`; the same rule over gold passages gives all-passage recall.

Chunk level: a chunk hits a gold passage when it contains it — Chinese: as a substring after removing all
whitespace; English: at least half of the passage's lower-cased word 6-gram shingles occur in the chunk.
A chunk hits a gold section when it belongs to that section's document and its heading path ends with the
section's heading path.

Answers: exact match and F1 against the short answers (the best over all of them), on characters for
Chinese and on words for English, after the usual SQuAD / CMRC normalisation.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from petrichor_core.text.lang import CJK

SHINGLE_WORDS = 6
_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


# ---------------------------------------------------------------------------------------- documents


def dedupe(items: Iterable[str | None]) -> list[str]:
    """Distinct non-empty items in first-seen order (chunk hits -> ranked documents)."""
    return list(dict.fromkeys(i for i in items if i))


def doc_hit_rank(ranked: Sequence[str], gold: Sequence[str], match: str = "any") -> int | None:
    """1-based rank at which the gold condition is first met, or None if never."""
    gold = list(dict.fromkeys(gold))
    if match == "all":
        return group_hit_rank(ranked, [(g,) for g in gold])
    return group_hit_rank(ranked, [gold]) if gold else None


def cover_rank(found: Iterable[Iterable[int]], need: int) -> int | None:
    """1-based rank at which the items seen so far cover all `need` groups (numbered 0..need-1), or None.
    `found[i]` holds the groups the i-th ranked item belongs to (a document may sit in several groups)."""
    if need <= 0:
        return None
    covered: set[int] = set()
    for rank, groups in enumerate(found, 1):
        covered.update(g for g in groups if 0 <= g < need)
        if len(covered) == need:
            return rank
    return None


def group_hit_rank(ranked: Sequence[str], groups: Sequence[Sequence[str]]) -> int | None:
    """1-based rank of the ranked document that completes one document of every group, or None."""
    member: dict[str, list[int]] = {}
    for g, docs in enumerate(groups):
        for d in docs:
            member.setdefault(d, []).append(g)
    return cover_rank((member.get(d, ()) for d in ranked), len(groups))


def recall_at(rank: int | None, k: int) -> float:
    return 1.0 if rank is not None and rank <= k else 0.0


def reciprocal_rank(rank: int | None, k: int = 10) -> float:
    return 1.0 / rank if rank is not None and rank <= k else 0.0


# -------------------------------------------------------------------------------------------- chunks


def squeeze(text: str) -> str:
    """All whitespace removed: Chinese text wraps anywhere, so spacing never decides a match."""
    return _WHITESPACE.sub("", text)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def shingles(text: str, n: int = SHINGLE_WORDS) -> set[tuple[str, ...]]:
    """Lower-cased word n-grams (none for a text shorter than n words)."""
    w = words(text)
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


@dataclass(frozen=True)
class GoldPassage:
    """A gold passage prepared once per question, then tested against many chunks. An English passage
    shorter than six words has no shingles; it hits when its words occur in the chunk consecutively."""

    text: str
    lang: str
    squeezed: str = ""
    grams: frozenset[tuple[str, ...]] = frozenset()
    phrase: str = ""

    @classmethod
    def of(cls, text: str, lang: str) -> GoldPassage:
        if lang == "zh":
            return cls(text, lang, squeezed=squeeze(text))
        grams = frozenset(shingles(text))
        return cls(text, lang, grams=grams, phrase="" if grams else " ".join(words(text)))

    def found_in(self, chunk: str, chunk_grams: set[tuple[str, ...]] | None = None) -> bool:
        if self.lang == "zh":
            return bool(self.squeezed) and self.squeezed in squeeze(chunk)
        if self.phrase:
            return f" {self.phrase} " in f" {' '.join(words(chunk))} "
        if not self.grams:
            return False
        grams = chunk_grams if chunk_grams is not None else shingles(chunk)
        return 2 * len(self.grams & grams) >= len(self.grams)


def section_hit(doc_id: str | None, heading_path: Sequence[str], sections: Iterable[tuple[str, Sequence[str]]]) -> bool:
    """Whether a chunk of `doc_id` with `heading_path` lies in one of the (doc_id, heading path) sections."""
    path = tuple(h.strip() for h in heading_path)
    for gold_doc, gold_path in sections:
        n = len(gold_path)
        if doc_id == gold_doc and n and len(path) >= n and path[-n:] == tuple(gold_path):
            return True
    return False


def first_hit_rank(hits: Sequence[bool]) -> int | None:
    return next((i for i, h in enumerate(hits, 1) if h), None)


# ------------------------------------------------------------------------------------------- answers


def _strip_punctuation(text: str) -> str:
    return "".join(ch for ch in text if ch not in string.punctuation and not unicodedata.category(ch).startswith("P"))


def normalize_answer(text: str, lang: str) -> str:
    """SQuAD's normalisation for English (case, punctuation, articles, spacing); for Chinese, CMRC's:
    lower case, punctuation and all whitespace removed."""
    text = _strip_punctuation(text.lower())
    if lang == "zh":
        return squeeze(text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def holds_short_answer(text: str, answer: str, lang: str) -> bool:
    """Whether `text` holds the short answer, both normalised: as a substring in Chinese, as whole words in
    English ("no" is not held by "not", "now" or "economy")."""
    gold = normalize_answer(answer, lang)
    if not gold:
        return False
    norm = normalize_answer(text, lang)
    return gold in norm if lang == "zh" else f" {gold} " in f" {norm} "


def _units(text: str, lang: str) -> list[str]:
    norm = normalize_answer(text, lang)
    return list(norm) if lang == "zh" else norm.split()


def exact_match(prediction: str, answers: Sequence[str], lang: str) -> float:
    pred = normalize_answer(prediction, lang)
    return float(any(pred == normalize_answer(a, lang) for a in answers))


def token_f1(prediction: str, answers: Sequence[str], lang: str) -> float:
    """Best F1 over `answers`: characters for Chinese, words for English."""
    pred = _units(prediction, lang)
    best = 0.0
    for answer in answers:
        gold = _units(answer, lang)
        common = sum((Counter(pred) & Counter(gold)).values())
        if common:
            precision, recall = common / len(pred), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def quote_supports(quote: str, passages: Sequence[GoldPassage], answers: Sequence[str], lang: str) -> bool:
    """A cited quote counts when it contains a short answer or a gold passage (by the chunk-level test)."""
    if any(holds_short_answer(quote, a, lang) for a in answers):
        return True
    return any(p.found_in(quote) for p in passages)


# ----------------------------------------------------------------------------------------- summaries


def mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 4) if len(values) else None


def percentile(values: Sequence[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 2) if len(values) else None


# ------------------------------------------------------------------------- CMRC 2018's official scoring

CMRC_PUNCTUATION = frozenset(
    [
        "-",
        ":",
        "_",
        "*",
        "^",
        "/",
        "\\",
        "~",
        "`",
        "+",
        "=",
        "，",
        "。",
        "：",
        "？",
        "！",
        "“",
        "”",
        "；",
        "’",
        "《",
        "》",
        "……",
        "·",
        "、",
        "「",
        "」",
        "（",
        "）",
        "－",
        "～",
        "『",
        "』",
    ]
)
"""The characters CMRC 2018's `cmrc2018_evaluate.py` removes (its `sp_char`); "……" never matches one character, as there."""
_HAN = CJK
_LATIN_TOKEN = re.compile(r"\w+|[^\w\s]")


def cmrc_segments(text: str) -> list[str]:
    """CMRC 2018's `mixed_segmentation(rm_punc=True)`: lower-cased, its punctuation removed, each Han character a
    token, the runs between them split into words (the official script uses NLTK's word tokenizer there; a
    word-or-symbol split gives the same tokens on these answers without the NLTK data download)."""
    out: list[str] = []
    run = ""
    for ch in str(text).lower().strip():
        if ch in CMRC_PUNCTUATION:
            continue
        if _HAN.match(ch):
            out.extend(_LATIN_TOKEN.findall(run))
            run = ""
            out.append(ch)
        else:
            run += ch
    out.extend(_LATIN_TOKEN.findall(run))
    return out


def _longest_common_run(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common contiguous run of tokens (the official `find_lcs`)."""
    best = 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def cmrc_exact_match(prediction: str, answers: Sequence[str]) -> float:
    """CMRC 2018's EM: equal after lower-casing, stripping and removing its punctuation, against any answer."""

    def norm(text: str) -> str:
        return "".join(ch for ch in str(text).lower().strip() if ch not in CMRC_PUNCTUATION)

    return float(any(norm(prediction) == norm(a) for a in answers))


def cmrc_f1(prediction: str, answers: Sequence[str]) -> float:
    """CMRC 2018's F1: over `cmrc_segments`, precision and recall of the longest common run of tokens, the best
    over the gold answers (0 when there is none)."""
    pred = cmrc_segments(prediction)
    best = 0.0
    for answer in answers:
        gold = cmrc_segments(answer)
        common = _longest_common_run(gold, pred)
        if common:
            precision, recall = common / len(pred), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best
