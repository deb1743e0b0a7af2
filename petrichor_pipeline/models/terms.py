"""Sentences, salient terms and search tokens: the text analysis behind the offline chat model.

Everything here is deterministic. Sentences keep their offsets into the source text, so whatever the
offline model quotes or summarises from them is a verbatim substring of what it was given. Chinese goes
through jieba (part-of-speech tagging with jieba's own IDF table); Latin text through regexes for
identifiers and capitalised names and a RAKE-style split of phrases at stopwords.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Iterator, Sequence

from petrichor_pipeline.models.stopwords import CHINESE, ENGLISH

CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK = re.compile(f"[{CJK_CLASS}]")
CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_LATIN = re.compile(r"[A-Za-z]")
_HEADING = re.compile(r"^(#{1,6})[\t\n\f\r ]+(.+?)[\t\n\f\r ]*#*[\t\n\f\r ]*$")
_FENCE = re.compile(r"^[\t\n\f\r ]*(```|~~~)")
_TABLE_RULE = re.compile(r"^[\s|:\-+]+$")
_CELL_SEP = re.compile(r"\t+|(?<!\\)\|")
_SENTENCE_END = re.compile(r"(?:[。！？；]+|[.!?;]+(?=\s|$))[”’\"'』」）)]*")
_MARKERS = re.compile(r"^(?:[-*+][ \t]+|\d{1,3}[.)、][ \t]*|>[ \t]*|\[[ xX]\][ \t]+)+")

_lock = threading.Lock()
_jieba_ready = False


def ensure_jieba() -> None:
    """Load jieba's dictionary once per process (it costs ~0.7 s), quietly."""
    global _jieba_ready
    if _jieba_ready:
        return
    with _lock:
        if not _jieba_ready:
            import jieba
            import jieba.analyse  # noqa: F401  (loads the IDF table used below)

            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            _jieba_ready = True


def language_of(text: str) -> str:
    """"zh" when Han characters carry the text (identifiers inside Chinese prose do not flip it), else "en"."""
    cjk = len(CJK.findall(text))
    return "zh" if cjk and cjk * 3 >= len(_LATIN.findall(text)) else "en"


def has_cjk(text: str) -> bool:
    return bool(CJK.search(text))


@dataclass(frozen=True)
class Sentence:
    """A sentence (or table cell, or list item) as a verbatim slice `source[start:end]`."""

    text: str
    start: int
    end: int
    paragraph: int
    heading_path: tuple[str, ...]
    code: bool = False


def split_sentences(markdown: str, include_code: bool = False) -> list[Sentence]:
    """Prose sentences of a Markdown text with offsets, the heading path above each, and paragraph ids.

    Headings are not sentences (they only set the path); fenced code is skipped unless `include_code`,
    in which case each non-blank code line becomes one sentence.
    """
    out: list[Sentence] = []
    stack: list[tuple[int, str]] = []
    paragraph = 0
    in_fence = False
    offset = 0
    for line in markdown.split("\n"):
        line_start, offset = offset, offset + len(line) + 1
        path = tuple(title for _, title in stack)
        if _FENCE.match(line):
            in_fence = not in_fence
            paragraph += 1
            continue
        if in_fence:
            if include_code and line.strip():
                lead = len(line) - len(line.lstrip())
                text = line.strip()
                out.append(Sentence(text, line_start + lead, line_start + lead + len(text), paragraph, path, True))
            continue
        if not line.strip():
            paragraph += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading.group(2).strip()))
            paragraph += 1
            continue
        if _TABLE_RULE.match(line) and "-" in line:
            continue
        for start, end in _cells(line):
            for s, e in _sentence_spans(line, start, end):
                text = line[s:e]
                if informative(text):
                    out.append(Sentence(text, line_start + s, line_start + e, paragraph, path))
    return out


def _cells(line: str) -> Iterator[tuple[int, int]]:
    pos = 0
    for sep in _CELL_SEP.finditer(line):
        yield pos, sep.start()
        pos = sep.end()
    yield pos, len(line)


def _sentence_spans(line: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Sentence spans inside line[start:end], trimmed of whitespace and list/quote markers."""
    piece_start = start
    cuts = [m.end() + start for m in _SENTENCE_END.finditer(line[start:end])]
    for cut in [*cuts, end]:
        s, e = piece_start, cut
        piece_start = cut
        while s < e and line[s].isspace():
            s += 1
        marker = _MARKERS.match(line[s:e])
        if marker:
            s += marker.end()
        while e > s and line[e - 1].isspace():
            e -= 1
        if e > s:
            yield s, e


def informative(text: str) -> bool:
    """At least two letters or Han characters: skips bare numbers, symbols and table rules."""
    return len(CJK.findall(text)) + len(_LATIN.findall(text)) >= 2


_CODE_LIKE = re.compile(r"-->|==>|\[\"|<br\s*/?>|^\w+\s*[\[(]\"|[{}]\s*$|^\s*[$]\s|\w\(.*\)\s*$")


def is_prose(text: str) -> bool:
    """A real sentence rather than a label, a table cell fragment or a line of unfenced code."""
    if _CODE_LIKE.search(text):
        return False
    if has_cjk(text):
        return len(CJK.findall(text)) >= 8
    return len(re.findall(r"[A-Za-z]+", text)) >= 5


# --- salient terms -------------------------------------------------------------------------------------

ENTITY = "entity"
CONCEPT = "concept"

_INLINE_CODE = re.compile(r"`([^`\n]{2,60})`")
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
_WORD = re.compile(r"[a-z][a-z0-9'’-]*[a-z0-9]|[a-z]|[^\sa-z]")
_NOUNISH = frozenset({"n", "nz", "vn", "nr", "ns", "nt", "nrt", "nw", "an", "nrfg", "ng"})
_GENERIC_ZH = frozenset({"问题", "内容", "方法", "东西", "情况", "部分", "方式", "过程", "结果"})


@dataclass(frozen=True)
class Term:
    """A salient term; `kind` is entity (identifiers, names, commands) or concept (other key terms)."""

    text: str
    kind: str
    score: float
    first: int
    case_sensitive: bool = True

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        body = re.escape(self.text)
        if not CJK.match(self.text[0]):
            body = r"(?<![A-Za-z0-9_])" + body
        if not CJK.match(self.text[-1]):
            body = body + r"(?![A-Za-z0-9_])"
        return re.compile(body, 0 if self.case_sensitive else re.IGNORECASE)

    def find(self, text: str) -> int:
        """Offset of the first mention in `text`, or -1."""
        match = self.pattern.search(text)
        return match.start() if match else -1

    def occurs_in(self, text: str) -> bool:
        return self.find(text) >= 0


def term_for(name: str) -> Term:
    """A matcher for a name given from outside (a page title): case-insensitive, word-bounded."""
    return Term(name, CONCEPT, 0.0, 0, case_sensitive=False)


@dataclass
class TermSet:
    entities: list[Term] = field(default_factory=list)
    concepts: list[Term] = field(default_factory=list)

    def ranked(self, limit: int | None = None) -> list[Term]:
        """Entities and concepts interleaved by rank (e0, c0, e1, c1, …) so neither class crowds the other out."""
        out: list[Term] = []
        for i in range(max(len(self.entities), len(self.concepts))):
            out.extend(group[i] for group in (self.entities, self.concepts) if i < len(group))
        return out[:limit] if limit is not None else out


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
        take(match.group(1).strip(), match.start(), match.end())
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
    terms = [
        Term(name, ENTITY, len(spots) + (0.5 if _is_identifier(name) else 0.0), min(spots))
        for name, spots in found.items()
    ]
    return "".join(chars), terms


def _is_identifier(name: str) -> bool:
    """Code-like names (identifiers, commands with arguments) rank above plain capitalised words."""
    return any(p.fullmatch(name) for p in _IDENTIFIERS) or (" " in name and not name.istitle())


def _english_concepts(text: str) -> list[Term]:
    """Key phrases: 1–3-word n-grams inside runs of non-stopwords (split at stopwords and punctuation).

    Without a part-of-speech tagger, recurrence is the signal that separates "snapshot manifest" from
    "replicas load": phrases seen twice or more rank by how often they and their words recur; a phrase
    seen once is kept only when it is a whole two-word run, and ranks last.
    """
    counts: Counter[str] = Counter()
    word_counts: Counter[str] = Counter()
    surface: dict[str, str] = {}
    first: dict[str, int] = {}
    whole_runs: set[str] = set()
    run: list[tuple[str, int]] = []

    def close() -> None:
        if run:
            stems = [_stem(w) for w, _ in run]
            word_counts.update(stems)
            for size in range(1, min(3, len(run)) + 1):
                for i in range(len(run) - size + 1):
                    key = " ".join(stems[i : i + size])
                    counts[key] += 1
                    surface.setdefault(key, " ".join(w for w, _ in run[i : i + size]))
                    first.setdefault(key, run[i][1])
            if len(run) <= 2:
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
        if count >= 2 and (len(words) > 1 or len(key) >= 4):
            kept[key] = 2.0 * count + sum(word_counts[w] for w in words) / len(words) + 0.5 * (len(words) - 1)
        elif count == 1 and len(words) == 2 and key in whole_runs:
            kept[key] = 0.5 + sum(word_counts[w] for w in words) / 4
    for key in list(kept):  # "snapshot" adds nothing when every mention is inside "snapshot manifest"
        if any(key != other and f" {key} " in f" {other} " and counts[other] >= counts[key] for other in kept):
            kept.pop(key)
    return [Term(surface[k], CONCEPT, score, first[k], case_sensitive=False) for k, score in kept.items()]


def _chinese_concepts(text: str) -> list[Term]:
    """Nouns by TF-IDF over jieba's IDF table, plus noun compounds (检索 + 增强 + 生成) that recur."""
    ensure_jieba()
    import jieba.analyse
    import jieba.posseg

    tfidf = jieba.analyse.default_tfidf
    tokens = [(p.word, p.flag) for p in jieba.posseg.cut(text)]
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
        if nounish and word not in CHINESE:
            run.append(word)
        else:
            _count_compounds(run, compounds, first, pos)
            run = []
        pos += len(word)
    _count_compounds(run, compounds, first, pos)

    def idf(word: str) -> float:
        return tfidf.idf_freq.get(word, tfidf.median_idf)

    total = max(sum(counts.values()), 1)
    scores = {w: c / total * idf(w) for w, c in counts.items() if w not in _GENERIC_ZH}
    for compound, c in compounds.items():
        if c >= 2 and compound not in counts:
            parts = [w for w in jieba.lcut(compound) if w in counts]
            scores[compound] = c / total * (sum(idf(w) for w in parts) if parts else idf(compound)) * 1.2
            for part in parts:  # a part seen only inside the compound is not a term of its own
                if counts[part] <= c:
                    scores.pop(part, None)
    for shorter in [w for w in scores if w in compounds]:
        if any(shorter != longer and shorter in longer and compounds[longer] >= compounds[shorter] for longer in scores):
            scores.pop(shorter)
    return [Term(w, CONCEPT, s, first.get(w, 0)) for w, s in scores.items()]


def _count_compounds(run: list[str], compounds: Counter[str], first: dict[str, int], end: int) -> None:
    if len(run) < 2:
        return
    for size in (2, 3):
        for i in range(len(run) - size + 1):
            compound = "".join(run[i : i + size])
            if len(compound) <= 8:
                compounds[compound] += 1
                first.setdefault(compound, end - len("".join(run[i:])))


# --- search tokens -------------------------------------------------------------------------------------

_LATIN_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]")
_SUFFIXES = ("ing", "ed", "es", "s", "e")


def search_tokens(text: str) -> list[str]:
    """Content tokens for overlap scoring: jieba words for Han runs, light-stemmed words for Latin."""
    lowered = text.lower()
    out: list[str] = []
    if has_cjk(lowered):
        ensure_jieba()
        import jieba

        for run in CJK_RUN.findall(lowered):
            out.extend(w for w in jieba.lcut_for_search(run) if len(w) >= 2 and w not in CHINESE)
    for word in _LATIN_TOKEN.findall(lowered):
        if len(word) >= 2 and word not in ENGLISH:
            out.append(_stem(word))
    return out


def _stem(word: str) -> str:
    if not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


# --- plain text ----------------------------------------------------------------------------------------

_CODE_FENCE_BLOCK = re.compile(r"^[ \t]*(```|~~~).*?(^[ \t]*\1[^\n]*$|\Z)", re.DOTALL | re.MULTILINE)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_WIKI_LINK = re.compile(r"\[\[([^\]|]+)\|([^\]]+)\]\]")
_TAG = re.compile(r"<[^>\n]{1,200}>")
_MARKUP = re.compile(r"[#>*`~|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def plain_text(markdown: str) -> str:
    """Markdown with code blocks, images, link targets, tags and markup symbols removed; spaces collapsed."""
    text = _CODE_FENCE_BLOCK.sub(" ", markdown)
    text = _IMAGE.sub(" ", text)
    text = _WIKI_LINK.sub(r"\2", text)
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub(" ", text)
    text = _MARKUP.sub("", text)
    text = re.sub(r"^[ \t]*(?:[-+]|\d{1,3}[.)])[ \t]+", "", text, flags=re.MULTILINE)
    return re.sub(r"\s+", " ", text).strip()


def cut(text: str, limit: int) -> str:
    """`text` within `limit` code points, ending in "…" when shortened (at a word boundary for Latin)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if not has_cjk(head[-1:]) and " " in head[limit // 2 :]:
        head = head[: head.rindex(" ")]
    return head.rstrip(" ,;:，；：、") + "…"
