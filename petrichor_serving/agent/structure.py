"""Structure questions: find the article and section the question names, then list the section's children.

A question names a section in its own words ("what does the part on mount points cover", "快速开始需要
哪些步骤"), so the section is found by fuzzy token overlap (idf-weighted, light stemming, jieba words)
between the question and every heading of the articles in scope, plus the article titles, with search
hits as votes for the article. Words that only say "this is a structure question" (section, guide,
步骤, 哪些…) are left out of the match.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import OSA

from petrichor_core.text.lang import CJK_CLASS, Language, has_cjk, language_of, question_words
from petrichor_core.text.lang.question_words import ASKS_FOR_PARTS, COVER_PHRASES
from petrichor_core.text.limits import ELLIPSIS
from petrichor_core.text.markdown import heading_of
from petrichor_serving.agent.words import agent_stem as stem
from petrichor_serving.agent.words import content_words
from petrichor_serving.snapshot import Snapshot


def _stems(words: str) -> frozenset[str]:
    return frozenset(stem(w) if w.isascii() else w for w in words.split())


PART_WORDS = _stems(question_words.PART_WORDS)
"""Nouns for the parts of a document, its subdivisions and a listing of them, and "under" (what sits under a
heading). Ablation (`benchmarks/outline_intent.py`): without them 9 of the rhdh structure set's 33 are outlined,
not 30; no fact question of rhdh, cmrc, multihop, rgb_zh_reject or the bundled set is outlined either way but
rhdh's six "what are the steps" how-tos (6 → 0)."""
COVER_WORDS = _stems(question_words.COVER_WORDS)
"""Verbs of what a text covers (its discourse verbs), the other side of asking for an outline. Ablation: 20 of
33 structure questions outlined without them, not 30; every fact set unchanged."""
FRAME_WORDS = _stems(question_words.FRAME_WORDS)
"""Words that frame such a question without naming its subject: the document's kind, question and light verbs.
Ablation: 17 of 33 structure questions outlined without them, not 30; every fact set unchanged."""
STRUCTURE_WORDS = PART_WORDS | COVER_WORDS | FRAME_WORDS
"""Left out when a question is matched against headings: they say "this asks for structure", not which section."""
MIN_COVERAGE = 0.5
"""A section (or an article by its title) is named when the question holds at least half of its heading
(idf-weighted), or two of its words."""
MAX_CHILDREN = 15
TITLE_WORD_SHARE = 0.3
"""How much a heading word that is also in the article title counts towards naming the section."""
OTHER_LANGUAGE_SHARE = 0.5
"""An article in another language than the question's counts half towards being the one named."""
TITLE_HIT_SHARE = 0.5
"""Each candidate section's score carries half its article title's match: the section of the named guide wins
over an equally named section of another guide."""
TIE_WORD_POINTS = 0.1
"""Per raw word (stopwords included) a heading shares with the question beyond its guide's title: a tie-break
between a section and its child that only adds "Using", never more than one content word is worth."""


@dataclass(frozen=True)
class Heading:
    article_id: str
    node_key: str
    title: str
    depth: int
    position: int
    start_line: int
    children: tuple[str, ...]
    tokens: frozenset[str]


@dataclass
class HeadingIndex:
    """Every article's headings with their tokens, and the idf of heading and title words."""

    headings: dict[str, list[Heading]]
    titles: dict[str, frozenset[str]]
    languages: dict[str, Language]
    idf: dict[str, float]

    def weight(self, tokens: frozenset[str] | set[str]) -> float:
        return sum(self.idf.get(t, 1.0) for t in tokens)


def _tokens(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


_RAW_WORD = re.compile(f"[a-z0-9]+|[{CJK_CLASS}]")
TYPO_MIN_LETTERS = 5
"""Latin words of at least this many letters match at one edit (a letter added, dropped, replaced, or two
swapped: Damerau's single-error misspellings, most typos people make): "Keycloack" in a heading names
"Keycloak", "enable" names the stem "enabl". Shorter words differ in meaning at one letter ("port", "post")."""


def _raw_words(text: str) -> frozenset[str]:
    """Every word, stopwords included: the tie-break between a section and a child that adds "Using"."""
    return frozenset(_RAW_WORD.findall(text.lower()))


def _one_typo_apart(a: str, b: str) -> bool:
    return a.isascii() and b.isascii() and min(len(a), len(b)) >= TYPO_MIN_LETTERS and OSA.distance(a, b, score_cutoff=1) <= 1


def _fuzzy(wanted: frozenset[str], tokens: frozenset[str]) -> frozenset[str]:
    """The heading tokens the question holds, exactly or one typo apart (`TYPO_MIN_LETTERS`)."""
    exact = wanted & tokens
    loose = wanted - exact
    return exact | {t for t in tokens - exact if any(_one_typo_apart(w, t) for w in loose)}


def _build_index(snap: Snapshot) -> HeadingIndex:
    headings: dict[str, list[Heading]] = {}
    for aid, keys in snap.nodes_by_article.items():
        rows = sorted((snap.nodes[k] for k in keys), key=lambda n: n["position"])
        kids: dict[str, list[str]] = {}
        for r in rows:
            if r["parent_key"]:
                kids.setdefault(r["parent_key"], []).append(r["node_key"])
        headings[aid] = [
            Heading(
                aid, r["node_key"], r["title"], r["depth"], r["position"], r["start_line"], tuple(kids.get(r["node_key"], ())), _tokens(r["title"])
            )
            for r in rows
        ]
    titles = {aid: _tokens(a["title"]) for aid, a in snap.articles.items()}
    languages = {aid: language_of(a["title"] + " " + a["content"][:400]) for aid, a in snap.articles.items()}
    df: Counter[str] = Counter()
    docs = 0
    for hs in headings.values():
        for h in hs:
            df.update(h.tokens)
            docs += 1
    for toks in titles.values():
        df.update(toks)
        docs += 1
    idf = {t: 1.0 + math.log((1 + docs) / (1 + n)) for t, n in df.items()}
    return HeadingIndex(headings, titles, languages, idf)


_cache: dict[int, tuple[Snapshot, HeadingIndex]] = {}
_lock = threading.Lock()


def heading_index(snap: Snapshot) -> HeadingIndex:
    """Built once per loaded snapshot (a few milliseconds per thousand headings)."""
    with _lock:
        hit = _cache.get(id(snap))
        if hit is not None and hit[0] is snap:
            return hit[1]
    index = _build_index(snap)
    with _lock:
        if len(_cache) > 4:
            _cache.clear()
        _cache[id(snap)] = (snap, index)
    return index


@dataclass(frozen=True)
class SectionMatch:
    article_id: str
    heading: Heading | None
    """The named section; None when the question names the article as a whole."""
    score: float


def find_section(snap: Snapshot, question: str, allowed: frozenset[str], hits: list[dict[str, Any]], lang: Language) -> SectionMatch | None:
    """The article and section the question names best, among sections that have children."""
    index = heading_index(snap)
    wanted = _tokens(question) - STRUCTURE_WORDS
    if not wanted:
        return None
    raw = _raw_words(question)
    votes: Counter[str] = Counter()
    for rank, c in enumerate(hits):
        if c.get("article_id"):
            votes[c["article_id"]] += 1.0 / (2 + rank)  # type: ignore[assignment]  # typeshed's Counter counts ints; it sums floats as well
    best: SectionMatch | None = None
    for aid in allowed:
        title = index.titles.get(aid, frozenset())
        title_hit = index.weight(wanted & title)
        article_score = (title_hit / max(index.weight(title), 1e-9)) + min(votes[aid], 1.0)
        if index.languages.get(aid) != lang:
            article_score *= OTHER_LANGUAGE_SHARE
        candidates: list[tuple[float, Heading | None]] = []

        def weight(tokens: frozenset[str]) -> float:
            # a word the section shares with its guide's title mostly names the guide, not the section
            return sum(index.idf.get(t, 1.0) * (TITLE_WORD_SHARE if t in title else 1.0) for t in tokens)

        title_cover = title_hit / max(index.weight(title), 1e-9)
        if title_hit and (title_cover >= MIN_COVERAGE or len(wanted & title) >= 2 or wanted <= title):
            candidates.append((TITLE_WORD_SHARE * title_hit * math.sqrt(title_cover) + TITLE_HIT_SHARE * title_hit + article_score, None))
        title_raw = _raw_words(snap.articles[aid]["title"]) if aid in snap.articles else frozenset()
        for h in index.headings.get(aid, []):
            if not h.children or not h.tokens or h.depth == 0:
                continue  # the root is the article itself: the article-level candidate above
            matched = _fuzzy(wanted, h.tokens)
            if not matched:
                continue
            coverage = weight(matched) / weight(h.tokens)
            if coverage < MIN_COVERAGE and len(matched - title) < 2 and matched != wanted:
                continue
            score = weight(matched) * math.sqrt(coverage) + TITLE_HIT_SHARE * title_hit + article_score
            score += TIE_WORD_POINTS * len(raw & (_raw_words(h.title) - title_raw))
            candidates.append((score, h))
        for score, section in candidates:
            if best is None or score > best.score + 1e-9:
                best = SectionMatch(aid, section, score)
    return best


def scope_articles(snap: Snapshot, scope: Any) -> frozenset[str]:
    """The articles a structure question may name: those the scope may read, and only its article when it names one."""
    allowed = snap.recall.allowed_article_ids(scope)
    if scope.article_id:
        allowed = allowed & {scope.article_id}
    return frozenset(allowed)


def asks_for_outline(snap: Snapshot, question: str, allowed: frozenset[str], lang: Language) -> SectionMatch | None:
    """The section (or article) whose outline the question asks for, else None.

    A question asks for an outline when it is made of nothing but one section's or article's own words and
    words about documents: at least one that names a part or a listing, or says what a text covers
    (`PART_WORDS`, `COVER_WORDS`: "sections", "steps", "walk through", "包括"), the rest framing words
    (`FRAME_WORDS`). One more word of its own ("which port does the section on serving use") asks a fact
    about the section, not for its parts. One rule about a question's make-up, whatever its phrasing."""
    words = _tokens(question)
    if not words & (PART_WORDS | COVER_WORDS) and not COVER_PHRASES.search(question):
        return None
    match = find_section(snap, question, allowed, [], lang)
    if match is None:
        return None
    index = heading_index(snap)
    named = index.titles.get(match.article_id, frozenset()) | (match.heading.tokens if match.heading is not None else frozenset())
    rest = [w for w in words - STRUCTURE_WORDS if not _named_by(w, named)]
    return match if not rest or ASKS_FOR_PARTS.search(question) else None


def _named_by(word: str, named: frozenset[str]) -> bool:
    """Whether a heading or title word names `word`: the same word, one typo apart ("keycloak" / "Keycloack",
    "enable" / "enabl"), or for Chinese one word inside the other."""
    if _fuzzy(frozenset({word}), named):
        return True
    return has_cjk(word) and any(has_cjk(t) and (word in t or t in word) for t in named)


def heading_offset(snap: Snapshot, node: dict[str, Any]) -> tuple[int, str] | None:
    """The article offset and verbatim text of a heading's title on its heading line."""
    content = snap.articles[node["article_id"]]["content"]
    lines = content.split("\n")
    line_no = node["start_line"] - 1
    if not 0 <= line_no < len(lines):
        return None
    line = lines[line_no]
    line_start = sum(len(x) + 1 for x in lines[:line_no])
    pos = line.find(node["title"])
    if pos >= 0:
        return line_start + pos, node["title"]
    heading = heading_of(line)  # the one heading rule (`text.markdown`)
    text = heading[1].removesuffix(ELLIPSIS) if heading else ""  # a capped title: its verbatim part
    pos = line.find(text) if text else -1
    if pos < 0:
        return None
    return line_start + pos, text


def section_children(snap: Snapshot, match: SectionMatch) -> tuple[str, list[dict[str, Any]]]:
    """The section's display title and its child nodes in document order (the article's top level when the
    question names the article: the children of a first heading that restates the title, else the headings)."""
    article = snap.articles[match.article_id]
    rows = sorted((snap.nodes[k] for k in snap.nodes_by_article.get(match.article_id, [])), key=lambda n: n["position"])
    if match.heading is not None:
        return match.heading.title, [snap.nodes[k] for k in match.heading.children][:MAX_CHILDREN]
    root = next((r for r in rows if not r["parent_key"]), None)
    top = [r for r in rows if root is not None and r["parent_key"] == root["node_key"]]
    out: list[dict[str, Any]] = []
    for r in top:
        kids = [x for x in rows if x["parent_key"] == r["node_key"]]
        restates = r["title"].strip().lower() == article["title"].strip().lower() or len(top) == 1
        out.extend(kids if restates and kids else [r])
    return article["title"], out[:MAX_CHILDREN]
