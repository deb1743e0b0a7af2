"""Entity and concept candidates of one article, extracted from the whole document.

The model proposes; these rules decide. Every key is re-normalised (and replaced by the name's key when
the model made it up), classes are capped and interleaved so neither crowds out the other, and
relations survive only between candidates of this article.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from petrichor_core.models.prompts import ALIASES_LABEL, FOLDER_LABEL, NO_EXISTING_PAGES, SUMMARY_LABEL
from petrichor_core.models.protocols import CallContext, CandidateRequest, ChatModel, ModelError
from petrichor_core.text.lang.texts import RELATION_RELATED
from petrichor_pipeline.knowledge.document import SUMMARY_MAX_CHARS, local_document_summary
from petrichor_pipeline.knowledge.page_keys import candidate_page_key, normalize_any_page_key
from petrichor_pipeline.knowledge.strings import cut, name_identity, normalize_string_list

CANDIDATE_LIMIT = 24
ALIAS_LIMIT = 12
CANDIDATE_SUMMARY_CHARS = 500
RELATION_LIMIT = 160
RELATION_TYPE_CHARS = 60
RELATION_DESCRIPTION_CHARS = 300
DEFAULT_RELATION_TYPE = RELATION_RELATED["zh"]
CATALOG_LINES = 300
CATALOG_SUMMARY_CHARS = 180


@dataclass(frozen=True)
class Candidate:
    kind: str
    """`entity` or `concept`."""
    name: str
    page_key: str
    aliases: tuple[str, ...] = ()
    summary: str = ""

    def to_prompt(self) -> dict[str, Any]:
        return {"pageKey": self.page_key, "kind": self.kind, "name": self.name, "aliases": list(self.aliases), "summary": self.summary}


@dataclass(frozen=True)
class Relation:
    from_key: str
    to_key: str
    relation_type: str
    description: str = ""

    def to_prompt(self) -> dict[str, Any]:
        return {"fromPageKey": self.from_key, "toPageKey": self.to_key, "relationType": self.relation_type, "description": self.description}


@dataclass(frozen=True)
class ExistingPage:
    """A page already in the knowledge base (previous snapshot), offered to the model for key reuse."""

    page_key: str
    kind: str
    title: str
    aliases: tuple[str, ...] = ()
    summary: str = ""
    category_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Extraction:
    summary: str
    candidates: tuple[Candidate, ...]
    """Entities and concepts interleaved (e0, c0, e1, c1, …), at most 24."""
    relations: tuple[Relation, ...]
    warnings: tuple[str, ...]
    model_calls: int


def normalize_candidates(items: object, kind: str, known_keys: Collection[str] = (), rekeyed: dict[str, str] | None = None) -> list[Candidate]:
    """`normalizeKnowledgeCandidates`: named items only, one per key, ≤ 12 aliases, summary ≤ 500.

    A model key not derived from the name (nor reusing one of `known_keys`) is replaced by the name's
    key (`page_keys.candidate_page_key`); `rekeyed` collects each replaced key -> its replacement, so
    relations naming the old key still resolve and the build can warn.
    """
    out: list[Candidate] = []
    seen: set[str] = set()
    for item in items if isinstance(items, (list, tuple)) else ():
        if not isinstance(item, Mapping):
            continue
        name = item.get("name")
        name = name.strip() if isinstance(name, str) else ""
        if not name:
            continue
        aliases = [a for a in normalize_string_list(item.get("aliases"), ALIAS_LIMIT + 1) if a != name][:ALIAS_LIMIT]
        chosen = candidate_page_key(item.get("pageKey"), kind, name, aliases, known_keys)
        if chosen.rejected and rekeyed is not None:
            rekeyed.setdefault(chosen.rejected, chosen.key)
        if chosen.key in seen:
            continue
        seen.add(chosen.key)
        summary = item.get("summary")
        summary = cut(summary.strip(), CANDIDATE_SUMMARY_CHARS) if isinstance(summary, str) else ""
        out.append(Candidate(kind, name, chosen.key, tuple(aliases), summary))
    return out


def rekeyed_warning(rekeyed: Mapping[str, str]) -> str:
    """One warning for every model key replaced by its name's key, naming the first three."""
    shown = ", ".join(f"{old} → {new}" for old, new in list(rekeyed.items())[:3])
    more = "…" if len(rekeyed) > 3 else ""
    return f"{len(rekeyed)} page key(s) from the model do not follow from the page name, the name's key is used: {shown}{more}"


def limit_candidates(entities: Sequence[Candidate], concepts: Sequence[Candidate], limit: int = CANDIDATE_LIMIT) -> list[Candidate]:
    """`limitKnowledgeCandidates`: interleave e0, c0, e1, c1, … and drop names that read the same."""
    out: list[Candidate] = []
    seen: set[str] = set()
    for i in range(max(len(entities), len(concepts))):
        for group in (entities, concepts):
            if i < len(group) and len(out) < limit:
                identity = name_identity(group[i].name)
                if identity not in seen:
                    seen.add(identity)
                    out.append(group[i])
    return out


def normalize_relations(items: object, candidates: Sequence[Candidate], rekeyed: Mapping[str, str] | None = None) -> list[Relation]:
    """`normalizeKnowledgeRelations`: both ends known candidates and distinct; unique per from|to|type; ≤ 160.

    An end naming a key that `normalize_candidates` replaced is read as its replacement.
    """
    keys = {c.page_key for c in candidates}
    renamed = rekeyed or {}
    out: list[Relation] = []
    seen: set[tuple[str, str, str]] = set()
    for item in items if isinstance(items, (list, tuple)) else ():
        if not isinstance(item, Mapping):
            continue
        src, dst = (normalize_any_page_key(item.get(end)) for end in ("fromPageKey", "toPageKey"))
        src, dst = renamed.get(src, src), renamed.get(dst, dst)
        if src not in keys or dst not in keys or src == dst:
            continue
        rtype, desc = item.get("relationType"), item.get("description")
        rtype = cut((rtype.strip() if isinstance(rtype, str) else "") or DEFAULT_RELATION_TYPE, RELATION_TYPE_CHARS)
        desc = cut(desc.strip(), RELATION_DESCRIPTION_CHARS) if isinstance(desc, str) else ""
        if (src, dst, rtype) in seen:
            continue
        seen.add((src, dst, rtype))
        out.append(Relation(src, dst, rtype, desc))
        if len(out) >= RELATION_LIMIT:
            break
    return out


def document_summary(value: object, markdown: str) -> str:
    """The model's `documentSummary` (≤ 800 code points), or the local summary when it gave none."""
    text = value.strip() if isinstance(value, str) else ""
    return cut(text, SUMMARY_MAX_CHARS) if text else local_document_summary(markdown)


def existing_pages_catalog(pages: Sequence[ExistingPage]) -> str:
    """The `<existing_pages>` listing: ≤ 300 lines `- key | kind | title | 别名：… | 摘要：… | 目录：…`."""
    lines = []
    for p in sorted(pages, key=lambda p: (p.kind, p.page_key))[:CATALOG_LINES]:
        parts = [p.page_key, p.kind, p.title]
        if p.aliases:
            parts.append(ALIASES_LABEL + "、".join(p.aliases))
        if p.summary:
            parts.append(SUMMARY_LABEL + cut(p.summary, CATALOG_SUMMARY_CHARS))
        if p.category_path:
            parts.append(FOLDER_LABEL + " / ".join(p.category_path))
        lines.append("- " + " | ".join(parts))
    return "\n".join(lines) or NO_EXISTING_PAGES


def extract_candidates(
    *,
    kb_name: str,
    title: str,
    markdown: str,
    document: str,
    existing_pages: Sequence[ExistingPage],
    model: ChatModel,
    ctx: CallContext,
) -> Extraction:
    """One `extract_candidates` call over the whole-document context, normalised.

    A failed call or a malformed reply leaves no candidates (the article still gets its source page)
    and a warning; the summary then falls back to the local one.
    """
    request = CandidateRequest(kb_name, title, document, existing_pages_catalog(existing_pages))
    try:
        reply = model.extract_candidates(request, ctx)
    except ModelError as exc:
        return Extraction(local_document_summary(markdown), (), (), (f"wiki candidate extraction failed: {exc.reason}",), 1)
    if not isinstance(reply, Mapping):
        return Extraction(local_document_summary(markdown), (), (), ("wiki candidate extraction reply is not valid JSON",), 1)
    known = {p.page_key for p in existing_pages}
    rekeyed: dict[str, str] = {}
    candidates = limit_candidates(
        normalize_candidates(reply.get("entities"), "entity", known, rekeyed),
        normalize_candidates(reply.get("concepts"), "concept", known, rekeyed),
    )
    relations = normalize_relations(reply.get("relations"), candidates, rekeyed)
    warnings = (rekeyed_warning(rekeyed),) if rekeyed else ()
    return Extraction(document_summary(reply.get("documentSummary"), markdown), tuple(candidates), tuple(relations), warnings, 1)
