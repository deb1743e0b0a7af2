"""Candidate extraction: entities, concepts and relations, each grounded in a sentence of the document."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from petrichor_core.models.offline.terms import CONCEPT, ENTITY, Term, is_identifier, name_identity, salient_terms
from petrichor_core.models.protocols import CandidateRequest
from petrichor_core.text.lang import CJK, CJK_RUN, language_of
from petrichor_core.text.lang.cues import DEFINITION_CUE, DEFINITION_LEAD, DEFINITION_TAIL
from petrichor_core.text.lang.texts import RELATION_RELATED
from petrichor_core.text.prose import Sentence, cut, is_prose, split_sentences

MAX_CANDIDATES = 20
"""The spec asks for usually 5–20 items, at most 24 (`ITEM_LIMIT`)."""
ITEM_LIMIT = 24
SUMMARY_MAX = 500
RELATION_DESCRIPTION_MAX = 300
DOCUMENT_SUMMARY_MAX = {"zh": 260, "en": 600}

_ACRONYM = re.compile(r"([^\s（(]{2,40}?(?:\s+[^\s（(]+){0,5})\s*[（(]([A-Z][A-Za-z0-9]{1,9})[)）]")
_ACRONYM_TAIL = re.compile(r"[（(][A-Z][A-Za-z0-9]{1,9}[)）]")
_SPACE_RUN = re.compile(r"\s+")
MIN_SECTIONS = 2
MIN_MENTIONS = 3
"""A name no sentence defines earns a page by recurring: in `MIN_SECTIONS` sections of the article, or
`MIN_MENTIONS` times in one (a short article or a single passage has one section)."""
_MAX_GAPS = 6
"""Whitespace runs a match of `_ACRONYM` can span: five between words, one before the parenthesis."""


def extract_candidates(req: CandidateRequest) -> dict[str, Any]:
    """Document summary, entities, concepts and co-occurrence relations, all quoted from the document."""
    lang = language_of(req.document)
    sentences = split_sentences(req.document)
    found = salient_terms(sentences, lang)
    aliases = _acronym_aliases(req.document, found.ranked())
    items: list[dict[str, Any]] = []
    selected: list[Term] = []
    seen: set[str] = set()
    for term in found.ranked():
        if len(items) >= min(MAX_CANDIDATES, ITEM_LIMIT):
            break
        identity = name_identity(term.text)
        alias = aliases.get(term.text, "")
        if not identity or identity in seen or (alias and name_identity(alias) in seen):
            continue
        definition = _defining_sentence(term, sentences)
        if definition is None or not (alias or worth_a_page(term, sentences, req.document)):
            continue
        seen.add(identity)
        selected.append(term)
        items.append(
            {
                "name": term.text,
                "kind": term.kind,
                "pageKey": f"{term.kind}/{term.text}",
                "aliases": [alias] if alias else [],
                "summary": definition.text[:SUMMARY_MAX],
                "headingPath": list(definition.heading_path),
            }
        )
    return {
        "documentSummary": document_summary(sentences, lang),
        "entities": [i for i in items if i["kind"] == ENTITY],
        "concepts": [i for i in items if i["kind"] == CONCEPT],
        "relations": _relations(req.document, sentences, selected, items, lang),
    }


def _acronym_aliases(document: str, ranked: Sequence[Term]) -> dict[str, str]:
    """ "Reciprocal Rank Fusion (RRF)" / "检索增强生成（RAG）": the long form and the acronym name each other."""
    names = sorted({term.text for term in ranked}, key=lambda n: (-len(n), n))  # longest match first
    out: dict[str, str] = {}
    for match in _acronym_matches(document):
        before, short = match.group(1), match.group(2)
        words = before.split()
        long = ""
        if len(words) >= len(short) and "".join(w[0] for w in words[-len(short) :]).upper() == short.upper():
            long = " ".join(words[-len(short) :])
        else:
            tail = CJK_RUN.findall(before)
            long = next((n for n in names if tail and tail[-1].endswith(n) and len(n) >= 2), "")
        if long and short in names:
            out.setdefault(short, long)
        if long and long in names:
            out.setdefault(long, short)
    return out


def _acronym_matches(document: str) -> Iterator[re.Match[str]]:
    """The matches of `_ACRONYM.finditer(document)`, found without trying the pattern at every offset.

    A long form holds no opening parenthesis and at most five inner whitespace runs, so a match ends at
    the first "(" / "（" after its start, that one must open an acronym, and the match starts after
    the seventh whitespace run before it. Searching just there keeps long documents linear.
    """
    resume = 0
    for tail in _ACRONYM_TAIL.finditer(document):
        opening = tail.start()
        start = max(resume, document.rfind("(", 0, opening) + 1, document.rfind("（", 0, opening) + 1)
        gaps = [gap.end() for gap in _SPACE_RUN.finditer(document, start, opening)]
        if len(gaps) > _MAX_GAPS:
            start = gaps[-_MAX_GAPS - 1]
        match = _ACRONYM.search(document, start, tail.end())
        if match:
            resume = match.end()
            yield match


def worth_a_page(term: Term, sentences: Sequence[Sentence], document: str) -> bool:
    """Only things worth a page get one: a code identifier, a term some sentence defines (an acronym
    spelled out, "Reciprocal Rank Fusion (RRF)", is one too: the caller knows it), or a name that
    recurs (`MIN_SECTIONS`, `MIN_MENTIONS`). A name is an entity or a compound concept ("snapshot manifest",
    标题路径); a plain word (文章, 调用, "loop") that is never defined is vocabulary, not a topic, and a page
    for it would only restate the passages that use it."""
    if is_identifier(term.text) or (f"`{term.text}`" in document and not CJK.search(term.text)):
        return True
    sections, mentions = set(), 0
    for sentence in sentences:
        found = len(term.pattern.findall(sentence.text))
        if found:
            if defines(term, sentence.text):
                return True
            sections.add(sentence.heading_path)
            mentions += found
    named = term.kind == ENTITY or " " in term.text.strip() or len(CJK.findall(term.text)) >= 3
    return named and (len(sections) >= MIN_SECTIONS or mentions >= MIN_MENTIONS)


def defines(term: Term, text: str) -> bool:
    """Whether `text` defines the term: it leads the sentence (after markers or an article) and a
    definition cue follows, or it is the bold head of the sentence ("**X** …")."""
    match = term.pattern.search(text)
    if match is None or not DEFINITION_LEAD.fullmatch(text[: match.start()]):
        return False
    after = text[match.end() :]
    bold = text[: match.start()].lstrip().startswith("**") and after.startswith("**")
    return bold or DEFINITION_TAIL.match(after) is not None


def _defining_sentence(term: Term, sentences: Sequence[Sentence]) -> Sentence | None:
    """The prose sentence that best defines the term: it leads the sentence and a cue ("is", "是", "：")
    follows it; ties go to the earliest. None when the term only appears in code or labels."""
    best: tuple[int, int] | None = None
    for i, sentence in enumerate(sentences):
        at = term.find(sentence.text)
        if at < 0 or not is_prose(sentence.text):
            continue
        after = sentence.text[at + len(term.text) : at + len(term.text) + 24]
        score = (2 if at <= 2 else 0) + (2 if DEFINITION_CUE.search(after) else 0)
        score += 1 if len(sentence.text) <= 200 else 0
        if best is None or score > best[0]:
            best = (score, i)
    return sentences[best[1]] if best else None


def document_summary(sentences: Sequence[Sentence], lang: str) -> str:
    """Extractive: the first prose sentences, up to the summary budget."""
    limit = DOCUMENT_SUMMARY_MAX[lang]
    joiner = "" if lang == "zh" else " "
    picked: list[str] = []
    for sentence in sentences:
        if not is_prose(sentence.text):
            continue
        if picked and len(joiner.join([*picked, sentence.text])) > limit:
            break
        picked.append(sentence.text)
        if len(picked) == 3:
            break
    return cut(joiner.join(picked), limit)


def _relations(
    document: str, sentences: Sequence[Sentence], selected: Sequence[Term], items: Sequence[dict[str, Any]], lang: str
) -> list[dict[str, Any]]:
    """Candidates named next to each other in one sentence (else one short paragraph), described by that text.

    Only neighbouring mentions are related, so a sentence listing ten terms yields a chain, not 45 pairs.
    """
    keys = {term.text: item["pageKey"] for term, item in zip(selected, items)}
    pairs: dict[frozenset[str], dict[str, Any]] = {}

    def relate(text: str) -> None:
        mentioned = _mentions(text, selected)
        for a, b in zip(mentioned, mentioned[1:]):
            pair = frozenset((a.text, b.text))
            if pair not in pairs:
                pairs[pair] = {
                    "fromPageKey": keys[a.text],
                    "toPageKey": keys[b.text],
                    "relationType": RELATION_RELATED[lang],
                    "description": text[:RELATION_DESCRIPTION_MAX],
                }

    paragraphs: dict[int, list[Sentence]] = defaultdict(list)
    for sentence in sentences:
        if is_prose(sentence.text):
            paragraphs[sentence.paragraph].append(sentence)
            relate(sentence.text)
    for group in paragraphs.values():
        text = document[group[0].start : group[-1].end]
        if len(group) > 1 and len(text) <= RELATION_DESCRIPTION_MAX:
            relate(text)
    return list(pairs.values())[: 2 * len(selected)]


def _mentions(text: str, selected: Sequence[Term]) -> list[Term]:
    """Terms mentioned in `text`, in order of first mention; a match inside a longer one does not count
    ("原文" inside "原文分片")."""
    spans = sorted(
        ((m.start(), -m.end(), term) for term in selected for m in term.pattern.finditer(text)),
        key=lambda span: (span[0], span[1]),
    )
    covered_until = -1
    first: dict[str, tuple[int, Term]] = {}
    for start, neg_end, term in spans:
        if -neg_end <= covered_until:
            continue
        covered_until = max(covered_until, -neg_end)
        first.setdefault(term.text, (start, term))
    return [term for _, term in sorted(first.values(), key=lambda v: v[0])]
