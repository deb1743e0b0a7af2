"""One article's contribution to the knowledge base's wiki: its source page and the
entity/concept pages, links and source refs it supports.

The contribution is self-contained, so the build keeps it per article (a row of its `wiki_candidates`
table, `ArticleKnowledge.to_row`) and the cross-article wiki is re-aggregated from contributions alone
(see `aggregate.py`): rebuilding or removing one article never needs another article's model calls.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from petrichor_core.models.protocols import CallContext, ChatModel
from petrichor_core.text.lang.texts import (
    BUILD_NOTE,
    KIND_HEADINGS,
    NO_SUMMARY,
    QUESTIONS_HEADING,
    RELATIONS_HEADING,
    SOURCE_HEADING,
    SOURCE_LINES,
    SUMMARY_HEADING,
)
from petrichor_pipeline.knowledge.candidates import Candidate, ExistingPage, Extraction, Relation, extract_candidates
from petrichor_pipeline.knowledge.chunk_view import ChunkLike, heading_label
from petrichor_pipeline.knowledge.document import whole_document_context
from petrichor_pipeline.knowledge.page_keys import KINDS
from petrichor_pipeline.knowledge.pages import generate_pages
from petrichor_pipeline.knowledge.strings import capped_warnings
from petrichor_pipeline.knowledge.taxonomy import plan_categories
from petrichor_pipeline.knowledge.wiki_links import linked_keys, wiki_link

SOURCE_KIND = "source"
EXTRACTS = "extracts"
RELATED = "related"
SOURCE_CHUNKS_PER_PAGE = 3


def source_page_key(article_id: str) -> str:
    return f"source-{article_id}"


@dataclass(frozen=True)
class ArticleInput:
    article_id: str
    kb_id: str
    tenant: str
    title: str
    content: str
    """The article's Markdown, as chunked."""
    article_version: str
    kb_name: str = ""
    """Shown to the model as `知识库：{name}`; the kb id when empty."""


@dataclass(frozen=True)
class PageContribution:
    page_key: str
    kind: str
    title: str
    summary: str
    content_md: str
    aliases: tuple[str, ...] = ()
    category_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class LinkContribution:
    from_page_key: str
    to_page_key: str
    link_type: str
    description: str = ""


@dataclass(frozen=True)
class SourceRef:
    page_key: str
    chunk_key: str
    """The chunk that mentions the page's subject; empty when the page stands for the whole article."""
    note: str


@dataclass(frozen=True)
class ArticleKnowledge:
    article_id: str
    kb_id: str
    tenant: str
    title: str
    article_version: str
    summary: str
    source_page: PageContribution
    pages: tuple[PageContribution, ...]
    """Entity and concept pages, in candidate order."""
    links: tuple[LinkContribution, ...]
    sources: tuple[SourceRef, ...]
    warnings: tuple[str, ...]
    model_calls: int

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only (tuples become lists)."""
        return _plain(asdict(self))

    def to_row(self) -> dict[str, Any]:
        """The contribution as a row of the build's `wiki_candidates` table (`CANDIDATE_SCHEMA`)."""
        data = self.to_dict()
        return row_of(data, contribution_digest(json.dumps(data, ensure_ascii=False)))

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ArticleKnowledge:
        data = {k: v for k, v in row.items() if k != "digest"}
        return cls.from_dict({**data, "source_page": row["pages"][0], "pages": row["pages"][1:]})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArticleKnowledge:
        def page(d: Mapping[str, Any]) -> PageContribution:
            return PageContribution(**{**d, "aliases": tuple(d["aliases"]), "category_path": tuple(d["category_path"])})

        return cls(
            **{
                **data,
                "source_page": page(data["source_page"]),
                "pages": tuple(page(p) for p in data["pages"]),
                "links": tuple(LinkContribution(**link) for link in data["links"]),
                "sources": tuple(SourceRef(**s) for s in data["sources"]),
                "warnings": tuple(data["warnings"]),
            }
        )


def contribution_digest(knowledge_json: str) -> str:
    """What identifies a contribution: the digest of its `to_dict()` JSON."""
    return hashlib.blake2b(knowledge_json.encode("utf-8"), digest_size=16).hexdigest()


def row_of(data: Mapping[str, Any], digest: str) -> dict[str, Any]:
    """A `to_dict()` contribution as a `wiki_candidates` row: the source page first among `pages`."""
    row = {k: v for k, v in data.items() if k not in ("source_page", "pages")}
    return {**row, "digest": digest, "pages": [data["source_page"], *data["pages"]]}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def build_article_knowledge(
    article: ArticleInput,
    chunks: Sequence[ChunkLike],
    model: ChatModel,
    ctx: CallContext,
    *,
    questions: Mapping[str, Sequence[str]] | None = None,
    existing_pages: Sequence[ExistingPage] = (),
    concurrency: int = 8,
) -> ArticleKnowledge:
    """Extraction over the whole document, folders, page bodies, then the source page.

    `questions` (chunk key -> questions) fills the source page's `## 切片推荐问题` section;
    `existing_pages` are the knowledge base's current entity/concept pages, offered for key reuse.
    A failed extraction leaves only the source page; failed pages fall back to summary pages.
    """
    document = whole_document_context(article.content)
    extraction = extract_candidates(
        kb_name=article.kb_name or article.kb_id,
        title=article.title,
        markdown=article.content,
        document=document,
        existing_pages=existing_pages,
        model=model,
        ctx=ctx,
    )
    warnings = list(extraction.warnings)
    calls = extraction.model_calls
    pages: list[PageContribution] = []
    links: list[LinkContribution] = []
    sources: list[SourceRef] = []
    note = BUILD_NOTE.format(title=article.title)
    if extraction.candidates:
        taxonomy = plan_categories(extraction.candidates, existing_pages, model, ctx)
        generated = generate_pages(
            title=article.title,
            document=document,
            candidates=extraction.candidates,
            relations=extraction.relations,
            model=model,
            ctx=ctx,
            concurrency=concurrency,
        )
        warnings += [*taxonomy.warnings, *generated.warnings]
        calls += taxonomy.model_calls + generated.model_calls
        for c in extraction.candidates:
            page = generated.pages[c.page_key]
            path = taxonomy.paths.get(c.page_key, ())
            pages.append(PageContribution(c.page_key, c.kind, c.name, page.summary, page.content_md, c.aliases, path))
            sources += [SourceRef(c.page_key, key, note) for key in _mentioning_chunks(c, chunks) or [""]]
        links = _page_links(extraction, pages)
    source_key = source_page_key(article.article_id)
    links = [LinkContribution(source_key, p.page_key, EXTRACTS) for p in pages] + links
    sources.insert(0, SourceRef(source_key, "", note))
    source_page = PageContribution(
        source_key, SOURCE_KIND, article.title, extraction.summary, render_source_page(article, extraction, chunks, questions or {})
    )
    return ArticleKnowledge(
        article_id=article.article_id,
        kb_id=article.kb_id,
        tenant=article.tenant,
        title=article.title,
        article_version=article.article_version,
        summary=extraction.summary,
        source_page=source_page,
        pages=tuple(pages),
        links=tuple(links),
        sources=tuple(sources),
        warnings=capped_warnings(warnings),
        model_calls=calls,
    )


def _mentioning_chunks(candidate: Candidate, chunks: Sequence[ChunkLike]) -> list[str]:
    """Keys of the first chunks naming the candidate (or an alias), so a page can cite where it came from."""
    terms = [t.casefold() for t in (candidate.name, *candidate.aliases)]
    found = []
    for chunk in sorted(chunks, key=lambda c: c.position):
        text = chunk.content.casefold()
        if any(t in text for t in terms):
            found.append(chunk.key)
            if len(found) >= SOURCE_CHUNKS_PER_PAGE:
                break
    return found


def _page_links(extraction: Extraction, pages: Sequence[PageContribution]) -> list[LinkContribution]:
    """Relations as typed links from their `from` page, then body mentions not already covered as `related`."""
    links = [LinkContribution(r.from_key, r.to_key, r.relation_type, r.description) for r in extraction.relations]
    linked = {(r.from_key, r.to_key) for r in extraction.relations}
    for page in pages:
        for target in linked_keys(page.content_md):
            if (page.page_key, target) not in linked and target != page.page_key:
                linked.add((page.page_key, target))
                links.append(LinkContribution(page.page_key, target, RELATED))
    return links


def render_source_page(article: ArticleInput, extraction: Extraction, chunks: Sequence[ChunkLike], questions: Mapping[str, Sequence[str]]) -> str:
    """The `source-{articleId}` body: summary, extracted pages, relations, questions, source."""
    names = {c.page_key: c.name for c in extraction.candidates}
    parts = [f"# {article.title}", SUMMARY_HEADING, extraction.summary or NO_SUMMARY]
    for kind in KINDS:
        items = [f"- {wiki_link(c.page_key, c.name)}：{c.summary}".rstrip("：") for c in extraction.candidates if c.kind == kind]
        if items:
            parts += [KIND_HEADINGS[kind], "\n".join(items)]
    if extraction.relations:
        parts += [RELATIONS_HEADING, "\n".join(_relation_line(r, names) for r in extraction.relations)]
    question_blocks = _question_blocks(chunks, questions)
    if question_blocks:
        parts += [QUESTIONS_HEADING, *question_blocks]
    parts += [SOURCE_HEADING, SOURCE_LINES.format(title=article.title, article_id=article.article_id, version=article.article_version)]
    return "\n\n".join(parts)


def _relation_line(r: Relation, names: Mapping[str, str]) -> str:
    line = f"- {wiki_link(r.from_key, names[r.from_key])} --{r.relation_type}--> {wiki_link(r.to_key, names[r.to_key])}"
    return f"{line}：{r.description}" if r.description else line


def _question_blocks(chunks: Sequence[ChunkLike], questions: Mapping[str, Sequence[str]]) -> list[str]:
    """`### heading` plus its questions; consecutive chunks under one heading share a block."""
    blocks: list[tuple[str, list[str]]] = []
    for chunk in sorted(chunks, key=lambda c: c.position):
        qs = [q for q in questions.get(chunk.key, ()) if q]
        if not qs:
            continue
        label = heading_label(chunk)
        if not blocks or blocks[-1][0] != label:
            blocks.append((label, []))
        blocks[-1][1].extend(q for q in qs if q not in blocks[-1][1])
    return [f"### {label}\n\n" + "\n".join(f"- {q}" for q in qs) for label, qs in blocks]
