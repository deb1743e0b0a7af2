"""Wiki page bodies for one article's candidates, with a fallback for every failure.

Pages are generated four candidates per call so each call sees the whole document once; a page the
model fails to write becomes a summary page built from the candidate itself, so the wiki never loses
an object the extraction found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from petrichor_core.models.protocols import CallContext, ChatModel, ModelError, PageRequest
from petrichor_core.text.lang.cues import PROCESS_NOTE_LEAD
from petrichor_core.text.lang.texts import NO_DETAIL, NO_SOURCE_TEXT, RELATED_SECTION
from petrichor_core.text.markdown import has_title_heading
from petrichor_pipeline.knowledge.batching import map_ordered
from petrichor_pipeline.knowledge.candidates import CANDIDATE_SUMMARY_CHARS, Candidate, Relation
from petrichor_pipeline.knowledge.page_keys import normalize_any_page_key
from petrichor_pipeline.knowledge.strings import capped_warnings, cut
from petrichor_pipeline.knowledge.wiki_links import resolve_links, wiki_link

PAGE_BATCH_SIZE = 4

_SUMMARY_LINE = re.compile(r"^\s*SUMMARY:", re.IGNORECASE)
_CHUNK_REF = re.compile(r"`?chunk-\d+`?")
_BLANK_RUN = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class GeneratedPage:
    page_key: str
    summary: str
    content_md: str
    generated: bool
    """False for the fallback summary page."""


@dataclass(frozen=True)
class PagesResult:
    pages: dict[str, GeneratedPage]
    """page key -> page, one per candidate, in candidate order."""
    warnings: tuple[str, ...]
    model_calls: int


@dataclass(frozen=True)
class _BatchOutcome:
    pages: list[GeneratedPage]
    missing: int
    warning: str


def normalize_generated_page_content(content: str, name: str, summary: str) -> str:
    """`normalizeGeneratedPageContent`: drop process notes and chunk ids; make sure the page has a title."""
    lines = content.replace("\r\n", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and _SUMMARY_LINE.match(lines[first]):
        del lines[first]
    text = "\n".join(line for line in lines if not line.lstrip().startswith(PROCESS_NOTE_LEAD))
    text = _BLANK_RUN.sub("\n\n", _CHUNK_REF.sub("", text)).strip()
    if not text:
        return f"# {name}\n\n{summary or NO_DETAIL}"
    return text if has_title_heading(text) else f"# {name}\n\n{text}"


def fallback_page(candidate: Candidate, relations: Sequence[Relation], names: Mapping[str, str]) -> str:
    """The candidate summary page, with a `## 相关知识` list of its relations in either direction."""
    body = f"# {candidate.name}\n\n{candidate.summary or NO_SOURCE_TEXT['zh']}"
    related = []
    for r in relations:
        if candidate.page_key not in (r.from_key, r.to_key):
            continue
        other = r.to_key if r.from_key == candidate.page_key else r.from_key
        related.append(f"- {wiki_link(other, names.get(other, other))}：{r.description or r.relation_type}")
    return body + (f"\n\n{RELATED_SECTION['zh']}\n\n" + "\n".join(related) if related else "")


def generate_pages(
    *,
    title: str,
    document: str,
    candidates: Sequence[Candidate],
    relations: Sequence[Relation],
    model: ChatModel,
    ctx: CallContext,
    concurrency: int = 8,
) -> PagesResult:
    """One page per candidate: `generate_pages` calls for batches of 4, at most `concurrency` in flight.

    `PageRequest` carries candidates as `{"pageKey", "kind", "name", "aliases", "summary"}` and relations
    as `{"fromPageKey", "toPageKey", "relationType", "description"}`. Links in a generated body keep
    only targets among this article's candidates (never the page itself), rewritten to canonical keys;
    other links become their display text. A failed call gives its whole batch fallback pages.
    """
    names = {c.page_key: c.name for c in candidates}
    valid = [c.to_prompt() for c in candidates]
    relation_rows = [r.to_prompt() for r in relations]
    batches = [list(candidates[i : i + PAGE_BATCH_SIZE]) for i in range(0, len(candidates), PAGE_BATCH_SIZE)]

    def fallback(c: Candidate) -> GeneratedPage:
        return GeneratedPage(c.page_key, c.summary, fallback_page(c, relations, names), False)

    def run(batch: list[Candidate]) -> _BatchOutcome:
        request = PageRequest(title, document, valid, relation_rows, [c.to_prompt() for c in batch])
        try:
            reply = model.generate_pages(request, ctx)
        except ModelError as exc:
            return _BatchOutcome([fallback(c) for c in batch], 0, f"wiki page generation failed, candidate summary pages used: {exc.reason}")
        items = reply.get("pages") if isinstance(reply, Mapping) else None
        by_key: dict[str, Mapping] = {}
        for item in items if isinstance(items, (list, tuple)) else ():
            if isinstance(item, Mapping):
                by_key.setdefault(normalize_any_page_key(item.get("pageKey")), item)
        out: list[GeneratedPage] = []
        for c in batch:
            item = by_key.get(c.page_key)
            content = item.get("contentMd") if item else None
            if not item or not isinstance(content, str):
                out.append(fallback(c))
                continue
            summary = item.get("summary")
            summary = (cut(summary.strip(), CANDIDATE_SUMMARY_CHARS) if isinstance(summary, str) else "") or c.summary
            body = normalize_generated_page_content(content, c.name, summary)
            body = resolve_links(body, partial(_known_key, names=names, own=c.page_key))
            out.append(GeneratedPage(c.page_key, summary, body, True))
        return _BatchOutcome(out, sum(1 for p in out if not p.generated), "")

    outcomes = map_ordered(run, batches, concurrency)
    warnings = [o.warning for o in outcomes]
    missing = sum(o.missing for o in outcomes)
    if missing:
        warnings.append(f"{missing} wiki page(s) not generated, candidate summary pages used")
    pages = {p.page_key: p for o in outcomes for p in o.pages}
    return PagesResult(pages, capped_warnings(warnings), len(batches))


def _known_key(raw: str, names: Mapping[str, str], own: str) -> str | None:
    key = raw if raw in names else normalize_any_page_key(raw)
    return key if key in names and key != own else None
