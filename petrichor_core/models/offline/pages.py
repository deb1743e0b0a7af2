"""Wiki pages: a summary, the document's own sentences about the page, links to co-occurring pages."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from petrichor_core.models.offline.terms import term_for
from petrichor_core.models.protocols import PageRequest
from petrichor_core.text.lang import language_of
from petrichor_core.text.lang.texts import IN_THE_SOURCE_SECTION, LABEL_COLON, NO_SOURCE_TEXT, RELATED_SECTION
from petrichor_core.text.prose import Sentence, cut, is_prose, split_sentences

PAGE_SUMMARY_MAX = {"zh": 80, "en": 200}
MAX_PAGE_POINTS = 4
MAX_PAGE_LINKS = 8
LINK_DESCRIPTION_MAX = 300


def generate_pages(req: PageRequest) -> dict[str, Any]:
    """Per requested page: title, summary, the document's sentences about it, links to co-occurring pages."""
    lang = language_of(req.document or " ".join(str(p.get("name", "")) for p in req.requested))
    valid = {str(p.get("pageKey", "")): p for p in req.valid_pages if p.get("pageKey")}
    prose = _prose(req.document)
    # which prose sentences name each valid page: the same for every requested page, so found once
    mentioned = {other: _mentioning(req.document, _names(page)) for other, page in valid.items()}
    pages = []
    for page in req.requested:
        key = str(page.get("pageKey", ""))
        name = str(page.get("name") or page.get("title") or key)
        at = sorted(_mentioning(req.document, _names(page) or [name]))
        about = [prose[i] for i in at]
        summary = str(page.get("summary") or (about[0].text if about else "")).strip()
        links = _page_links(key, prose, at, req.relations, valid, mentioned)
        content = _page_markdown(name, summary, about, links, lang)
        pages.append({"pageKey": key, "summary": cut(summary, PAGE_SUMMARY_MAX[lang]), "contentMd": content})
    return {"pages": pages}


def _names(page: dict[str, Any]) -> list[str]:
    names = [str(page.get("name") or page.get("title") or "")] + [str(a) for a in page.get("aliases") or []]
    return [n for n in names if n.strip()]


def _prose(document: str) -> list[Sentence]:
    return [s for s in split_sentences(document) if is_prose(s.text)]


@lru_cache(maxsize=2048)
def _mentions(document: str, name: str) -> frozenset[int]:
    """Positions in `_prose(document)` of the sentences naming `name`.

    Cached: an article's pages are requested in batches over the same document and the same valid
    pages, so each name is looked for in each sentence once per article rather than once per batch.
    """
    matcher = term_for(name)
    return frozenset(i for i, s in enumerate(_prose(document)) if matcher.occurs_in(s.text))


def _mentioning(document: str, names: Sequence[str]) -> frozenset[int]:
    return frozenset().union(*(_mentions(document, n) for n in names))


def _page_links(
    key: str,
    prose: Sequence[Sentence],
    about: Sequence[int],
    relations: Sequence[dict[str, Any]],
    valid: dict[str, dict[str, Any]],
    mentioned: dict[str, frozenset[int]],
) -> list[tuple[str, str, str]]:
    """(pageKey, name, why) for valid pages sharing a relation or a sentence with this page; never itself.

    `about` are the positions in `prose` of the sentences naming this page, `mentioned` those naming each
    valid page."""
    links: dict[str, tuple[str, str, str]] = {}
    for relation in relations:
        ends = (str(relation.get("fromPageKey", "")), str(relation.get("toPageKey", "")))
        if key in ends:
            other = ends[1] if ends[0] == key else ends[0]
            if other != key and other in valid:
                why = str(relation.get("description") or relation.get("relationType") or "")
                links.setdefault(other, (other, _names(valid[other])[0] if _names(valid[other]) else other, why))
    for at in about:
        for other, found in mentioned.items():
            if other != key and other not in links and at in found:
                links[other] = (other, _names(valid[other])[0], prose[at].text[:LINK_DESCRIPTION_MAX])
    return list(links.values())[:MAX_PAGE_LINKS]


def _page_markdown(name: str, summary: str, about: Sequence[Sentence], links: Sequence[tuple[str, str, str]], lang: str) -> str:
    language = "zh" if lang == "zh" else "en"
    empty = NO_SOURCE_TEXT[language]
    blocks = [f"# {name}", summary or empty]
    points = [s.text for s in about if s.text != summary][:MAX_PAGE_POINTS]
    if points:
        blocks.append(IN_THE_SOURCE_SECTION[language] + "\n\n" + "\n".join(f"- {p}" for p in points))
    if links:
        shown: set[str] = set(points) | {summary}
        lines = []
        for key, label, why in links:  # a sentence naming several pages is quoted once, not once per link
            lines.append(f"- [[{key}|{label}]]" + (f"{LABEL_COLON[language]}{why}" if why and why not in shown else ""))
            shown.add(why)
        blocks.append(RELATED_SECTION[language] + "\n\n" + "\n".join(lines))
    return "\n\n".join(blocks)
