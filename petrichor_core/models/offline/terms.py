"""Salient terms and search tokens: what a text is about, for the offline model.

Chinese goes through jieba (part-of-speech tagging scored with jieba's own IDF table, plus recurring
noun compounds); Latin text through regexes for identifiers and capitalised names and a RAKE-style
split of phrases at stopwords. Everything is deterministic: ties break by first mention.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from petrichor_core.text.lang import CJK, CJK_RUN, idf_table, init_jieba, init_posseg
from petrichor_core.text.lang.stopwords import CHINESE, ENGLISH, GENERIC_ZH
from petrichor_core.text.prose import Sentence, informative
from petrichor_core.text.stem import stem

ENTITY = "entity"
CONCEPT = "concept"

_INLINE_CODE = re.compile(r"`([^`\n]{2,60})`")
_NAME_LIKE_CODE = re.compile(r"[\w./:@#+-]+(?: [\w./:@#+-]+){0,3}")
"""Inline code that names something (a command, a key, a path); not markup or a template sentence."""
_IDENTIFIERS = [
    re.compile(r"(?<![\w-])--[a-z0-9][a-z0-9-]*"),  # --flags
    re.compile(r"(?<![\w.:/])/(?:[A-Za-z][\w.{}:-]*/)*[A-Za-z][\w.{}:-]*"),  # /api/paths
    re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"),  # ENV_VARS
    re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"),  # snake_case
    re.compile(r"\b[a-z]+(?:[A-Z][a-z0-9]*)+\b"),  # lowerCamel
    re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b"),  # CamelCase
    re.compile(r"\b[\w-]+\.(?:py|toml|ya?ml|json|md|txt|sh|ini|cfg|go|ts|js|parquet|lance)\b"),  # files
]
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:[ ][A-Z][A-Za-z0-9]*){0,3}\b")
_WORD = re.compile(r"[a-z][a-z0-9-]*[a-z0-9]|[a-z]|[^\sa-z]")
_NOUNISH = frozenset({"n", "nz", "vn", "nr", "ns", "nt", "nrt", "nw", "an", "nrfg", "ng"})
_MODIFIERS = frozenset({"b"})
"""Distinguishing words (主, 从, 热): never terms alone, but they start compounds such as 主节点."""


@dataclass(frozen=True)
class Term:
    """A salient term; `kind` is entity (identifiers, names, commands) or concept (other key terms)."""

    text: str
    kind: str
    score: float
    first: int
    case_sensitive: bool = True

    @property
    def pattern(self) -> re.Pattern[str]:
        """Looked up each time, not a `cached_property`: Python 3.11's takes one lock for every instance of
        the class, and the build's threads making terms at once queued on it (a wiki candidates step of 100
        articles: 4.3 s threaded, 3.3 s without the lock)."""
        return _term_pattern(self.text, self.case_sensitive)

    def find(self, text: str) -> int:
        """Offset of the first mention in `text`, or -1."""
        match = self.pattern.search(text)
        return match.start() if match else -1

    def occurs_in(self, text: str) -> bool:
        return self.find(text) >= 0


@lru_cache(maxsize=8192)
def _term_pattern(text: str, case_sensitive: bool) -> re.Pattern[str]:
    """Word-bounded matcher of a term, compiled once per process (the same names recur across calls,
    and far more of them than `re`'s own cache of 512 holds)."""
    body = re.escape(text)
    if not CJK.match(text[0]):
        body = r"(?<![A-Za-z0-9_])" + body
    if not CJK.match(text[-1]):
        body = body + r"(?![A-Za-z0-9_])"
    return re.compile(body, 0 if case_sensitive else re.IGNORECASE)


def name_identity(name: str) -> str:
    """Names that differ only in case, spacing or punctuation are the same item ("Open AI" = "openai")."""
    return re.sub(r"[\s\W_]+", "", name.lower())


def term_for(name: str) -> Term:
    """A matcher for a name given from outside (a page title): case-insensitive, word-bounded."""
    return Term(name, CONCEPT, 0.0, 0, case_sensitive=False)


@dataclass
class TermSet:
    entities: list[Term] = field(default_factory=list)
    concepts: list[Term] = field(default_factory=list)

    def ranked(self) -> list[Term]:
        """Entities and concepts interleaved by rank (e0, c0, e1, c1, …) so neither class crowds the other out."""
        out: list[Term] = []
        for i in range(max(len(self.entities), len(self.concepts))):
            out.extend(group[i] for group in (self.entities, self.concepts) if i < len(group))
        return out


def salient_terms(sentences: Sequence[Sentence], lang: str) -> TermSet:
    """Entities and concepts of a text, each list best first (ties broken by first mention)."""
    text = "\n".join(s.text for s in sentences if not s.code)
    masked, entities = _latin_entities(text, _sentence_spans_in_joined(sentences), english=lang == "en")
    concepts = _chinese_concepts(masked) if lang == "zh" else _english_concepts(masked)
    taken = {e.text.lower() for e in entities}
    concepts = [c for c in concepts if c.text.lower() not in taken]
    return TermSet(_best_first(entities), _best_first(concepts))


def _best_first(terms: Iterable[Term]) -> list[Term]:
    return sorted(terms, key=lambda t: (-t.score, t.first, t.text))


def _sentence_spans_in_joined(sentences: Sequence[Sentence]) -> dict[int, int]:
    """Start → length of each prose sentence inside the newline-joined analysis text."""
    spans, pos = {}, 0
    for s in sentences:
        if s.code:
            continue
        spans[pos] = len(s.text)
        pos += len(s.text) + 1
    return spans


_MASK = "\x1f"
"""Blanks out a term already taken; not a space, so phrases on either side are not joined across it."""


def _latin_entities(text: str, sentence_spans: dict[int, int], english: bool) -> tuple[str, list[Term]]:
    """Identifiers, inline code and capitalised names; returns the text with them masked out."""
    chars = list(text)
    found: dict[str, list[int]] = {}

    def take(name: str, start: int, end: int) -> None:
        if informative(name) and name.count(" ") <= 4:
            found.setdefault(name, []).append(start)
        chars[start:end] = _MASK * (end - start)

    for match in _INLINE_CODE.finditer(text):
        code = match.group(1).strip()
        take(code if _NAME_LIKE_CODE.fullmatch(code) else "", match.start(), match.end())
    for pattern in _IDENTIFIERS:
        for match in pattern.finditer("".join(chars)):
            take(match.group(0), match.start(), match.end())
    masked = "".join(chars)
    for match in _CAPITALISED.finditer(masked):
        words = match.group(0).split(" ")
        start = match.start()
        while words and words[0].lower() in ENGLISH:
            start += len(words[0]) + 1
            words.pop(0)
        name = " ".join(words)
        if len(name) < 2:
            continue
        if sentence_spans.get(start) == len(name):
            continue  # a label line such as "Note" or "Warning"
        if english and len(words) == 1 and name[1:].islower() and start in sentence_spans:
            continue  # "Then", "Each": capitalised only because a sentence starts there
        take(name, start, start + len(name))
    terms = [Term(name, ENTITY, len(spots) + (0.5 if is_identifier(name) else 0.0), min(spots)) for name, spots in found.items()]
    return "".join(chars), terms


def is_identifier(name: str) -> bool:
    """Code-like names (identifiers, commands with arguments) rank above plain capitalised words."""
    return any(p.fullmatch(name) for p in _IDENTIFIERS) or (" " in name and not name.istitle())


MIN_ENGLISH_CONCEPTS = 5
_PARTICIPLE = re.compile(r"[^e]ed$")
"""A lone "published" or "partitioned" is a verb form; "seed" and "speed" are not."""


def _english_concepts(text: str) -> list[Term]:
    """Key phrases: 1–3-word n-grams inside runs of non-stopwords (split at stopwords and punctuation).

    Without a part-of-speech tagger, recurrence is the signal that separates "snapshot manifest" from
    "replicas load": phrases seen twice or more rank by how often they and their words recur. A single
    word must recur in one form (plural aside): "change / changed / changing" is a verb, not a concept.
    Phrases seen once (whole two-word runs) only fill in when a short text has too few recurring ones.
    """
    counts: Counter[str] = Counter()
    word_counts: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = defaultdict(Counter)
    surface: dict[str, str] = {}
    first: dict[str, int] = {}
    whole_runs: set[str] = set()
    run: list[tuple[str, int]] = []

    def close() -> None:
        if run:
            plain = [w for w, _ in run]
            stems = [stem(w) for w in plain]
            word_counts.update(stems)
            for size in range(1, min(3, len(run)) + 1):
                for i in range(len(run) - size + 1):
                    key = " ".join(stems[i : i + size])
                    words = " ".join(plain[i : i + size])
                    counts[key] += 1
                    forms[key][words.removesuffix("s")] += 1
                    surface.setdefault(key, words)
                    first.setdefault(key, run[i][1])
            if len(run) == 2:
                whole_runs.add(" ".join(stems))
        run.clear()

    for match in _WORD.finditer(text.lower()):
        word = match.group(0)
        if word[0].isalpha() and word not in ENGLISH and len(word) > 2:
            run.append((word, match.start()))
        else:
            close()
    close()
    kept: dict[str, float] = {}
    for key, count in counts.items():
        words = key.split(" ")
        if len(words) == 1 and (len(key) < 4 or max(forms[key].values()) < 2 or _PARTICIPLE.search(surface[key])):
            continue
        if count >= 2:
            kept[key] = 2.0 * count + sum(word_counts[w] for w in words) / len(words) + 0.5 * (len(words) - 1)
    longer = _longer_phrases(kept)
    for key in list(kept):  # "snapshot" adds nothing when every mention is inside "snapshot manifest"
        if any(other in kept and counts[other] >= counts[key] for other in longer.get(key, ())):
            kept.pop(key)
    if len(kept) < MIN_ENGLISH_CONCEPTS:
        for key in sorted(whole_runs - kept.keys(), key=lambda k: first[k]):
            if counts[key] == 1 and not any(w.endswith(("ed", "ing")) for w in surface[key].split(" ")):
                kept[key] = 0.5 + sum(word_counts[w] for w in key.split(" ")) / 4
    return [Term(surface[k], CONCEPT, score, first[k], case_sensitive=False) for k, score in kept.items()]


def _longer_phrases(phrases: Iterable[str]) -> dict[str, list[str]]:
    """Each phrase's proper sub-phrases (contiguous words) → the phrases containing them.

    Phrases have at most three words, so this is linear where comparing every pair was quadratic.
    """
    out: dict[str, list[str]] = defaultdict(list)
    for phrase in phrases:
        words = phrase.split(" ")
        for size in range(1, len(words)):
            for i in range(len(words) - size + 1):
                out[" ".join(words[i : i + size])].append(phrase)
    return out


def _chinese_concepts(text: str) -> list[Term]:
    """Nouns by TF-IDF over jieba's IDF table, plus noun compounds that recur (主 + 节点 → 主节点)."""
    jieba = init_jieba()
    idf_freq, median_idf = idf_table()
    tokens = tagged_words(text)
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    compounds: Counter[str] = Counter()
    pos = 0
    run: list[str] = []
    for word, flag in tokens:
        nounish = flag in _NOUNISH and CJK_RUN.fullmatch(word) is not None
        if nounish and len(word) >= 2 and word not in CHINESE:
            counts[word] += 1
            first.setdefault(word, pos)
        if (nounish or flag in _MODIFIERS) and word not in CHINESE:
            run.append(word)
        else:
            _count_compounds(run, compounds, first, pos)
            run = []
        pos += len(word)
    _count_compounds(run, compounds, first, pos)

    def idf(word: str) -> float:
        return idf_freq.get(word, median_idf)

    kept = {c: n for c, n in compounds.items() if n >= 2 and c not in counts}
    for compound in list(kept):  # "主节点" adds nothing when every mention is inside "主节点地址"
        if any(compound != longer and compound in longer and kept[longer] >= kept[compound] for longer in kept):
            kept.pop(compound)
    parts = {compound: [w for w in jieba.lcut(compound) if w in counts] for compound in kept}
    own = Counter(counts)
    for compound, n in kept.items():  # a part counts only where it stands alone ("节点" outside "主节点")
        for part in parts[compound]:
            own[part] -= n
    total = max(sum(counts.values()), 1)
    scores = {w: n / total * idf(w) for w, n in own.items() if n > 0 and w not in GENERIC_ZH}
    for compound, n in kept.items():
        scores[compound] = n / total * (sum(idf(w) for w in parts[compound]) if parts[compound] else idf(compound))
    return [Term(w, CONCEPT, s, first.get(w, 0)) for w, s in scores.items()]


def tagged_words(text: str) -> list[tuple[str, str]]:
    """`jieba.posseg.cut(text)` as (word, flag) pairs, tagged line by line through a cache.

    jieba never joins words across a line break (it emits each "\n" as its own token), so the result
    equals tagging the whole text (whose line ends are "\n" only, as normalisation leaves them). Its
    HMM pass over unknown words is the model's largest cost, and the same lines come back: a chunk's
    sentences when questions are generated, then the whole article's when its candidates are extracted.
    """
    out: list[tuple[str, str]] = []
    for i, line in enumerate(text.split("\n")):
        if i:
            out.append(("\n", "x"))
        words, flags = _tagged_line(line)
        out.extend(zip(words, flags))
    return out


@lru_cache(maxsize=1 << 15)
def _tagged_line(line: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """One line's words and flags as two tuples of interned strings: about 0.5 KB a line, a fifth of
    what (word, flag) pairs take, so a bucket's worth of lines stays cached between the two steps."""
    pairs = [(p.word, p.flag) for p in init_posseg().cut(line)]
    return tuple(sys.intern(w) for w, _ in pairs), tuple(sys.intern(f) for _, f in pairs)


def _count_compounds(run: list[str], compounds: Counter[str], first: dict[str, int], end: int) -> None:
    if len(run) < 2:
        return
    for size in (2, 3):
        for i in range(len(run) - size + 1):
            compound = "".join(run[i : i + size])
            if len(compound) <= 8:
                compounds[compound] += 1
                first.setdefault(compound, end - len("".join(run[i:])))


def zh_words(text: str) -> list[str]:
    """jieba's segmentation, covering the text exactly (offsets add up)."""
    return init_jieba().lcut(text)
