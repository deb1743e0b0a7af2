"""A shallow folder for each new page: at most two levels, shared across articles.

A page that already has a folder keeps it, so folders stay stable as articles are rebuilt; only pages
without one are sent to the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from petrichor_core.models.protocols import CallContext, ChatModel, ModelError
from petrichor_core.text.lang.texts import KIND_FOLDER_NAMES
from petrichor_pipeline.knowledge.candidates import Candidate, ExistingPage
from petrichor_pipeline.knowledge.page_keys import normalize_any_page_key

MAX_DEPTH = 2
EXISTING_FOLDERS_LIMIT = 120

_PATH_SPLIT = re.compile(r"[/／|｜>]")


@dataclass(frozen=True)
class Taxonomy:
    paths: dict[str, tuple[str, ...]]
    """page key -> folder path; a candidate without a folder is absent."""
    warnings: tuple[str, ...]
    model_calls: int


def normalize_category_path(value: object) -> tuple[str, ...]:
    """A folder path from a list or an `A / B` string: class-name parts dropped, at most two levels."""
    if isinstance(value, str):
        parts = _PATH_SPLIT.split(value)
    elif isinstance(value, (list, tuple)):
        parts = [p for p in value if isinstance(p, str)]
    else:
        return ()
    kept = [p.strip() for p in parts if p.strip() and p.strip().lower() not in KIND_FOLDER_NAMES]
    return tuple(kept[:MAX_DEPTH])


def existing_folders(pages: Sequence[ExistingPage]) -> list[str]:
    """The ≤ 120 distinct folders already in use, sorted, as `一级 / 二级`."""
    return sorted({" / ".join(p.category_path) for p in pages if p.category_path})[:EXISTING_FOLDERS_LIMIT]


def plan_categories(candidates: Sequence[Candidate], existing_pages: Sequence[ExistingPage], model: ChatModel, ctx: CallContext) -> Taxonomy:
    """Folders for the candidates: an existing page's folder wins; the rest come from one `plan_catalog` call.

    The reply may name pages by `pageKey` or `slug` and give `path` or `categoryPath`. A failed call
    leaves the new pages without folders and records a warning; it never fails the build.
    """
    known = {p.page_key: p.category_path for p in existing_pages if p.category_path}
    paths = {c.page_key: tuple(known[c.page_key]) for c in candidates if c.page_key in known}
    pending = [c for c in candidates if c.page_key not in paths]
    if not pending:
        return Taxonomy(paths, (), 0)
    try:
        reply = model.plan_catalog([c.to_prompt() for c in pending], existing_folders(existing_pages), ctx)
    except ModelError as exc:
        return Taxonomy(paths, (f"wiki folder planning failed: {exc.reason}",), 1)
    assignments = reply.get("assignments") if isinstance(reply, Mapping) else None
    if not isinstance(assignments, (list, tuple)):
        return Taxonomy(paths, ("wiki folder planning reply is not valid JSON",), 1)
    wanted = {c.page_key for c in pending}
    for item in assignments:
        if not isinstance(item, Mapping):
            continue
        key = normalize_any_page_key(item.get("pageKey") or item.get("slug"))
        path = normalize_category_path(item.get("path") or item.get("categoryPath"))
        if key in wanted and path and key not in paths:
            paths[key] = path
    return Taxonomy(paths, (), 1)
