"""Catalog planning: at most two folder levels, from sections or from the pages other pages mention."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from petrichor_core.models.offline.terms import name_identity, term_for
from petrichor_core.text.lang import language_of
from petrichor_core.text.lang.texts import KIND_FOLDER_NAMES, OTHER_FOLDER
from petrichor_core.text.prose import strip_section_number

MAX_TOP_FOLDERS = 6
HUB_MAX_SHARE = 2 / 3
"""A name mentioned by nearly every page (the article's own subject) is no way to tell pages apart."""
_FOLDER_SPLIT = re.compile(r"\s*[/／|｜>]\s*")


def plan_catalog(candidates: Sequence[dict[str, Any]], existing_folders: Sequence[str]) -> dict[str, Any]:
    """A folder for every candidate, reusing existing folders; never more than six at the top.

    Candidates that carry the section they were found in (`headingPath`, as offline extraction gives
    them) are grouped by section, skipping the headings they all share (usually the title); a big
    section with varied subsections gets a second level. Otherwise they are grouped by hub: the page
    names that other pages' names and summaries mention most (a page about AOF that mentions 持久化 goes
    into 持久化). The largest groups become folders, the rest go to "Other".
    """
    lang = language_of(" ".join(str(c.get("name", "")) + str(c.get("summary", "")) for c in candidates))
    if any(_section_path(c) for c in candidates):
        tops, subs = _by_section(candidates)
    else:
        tops, subs = _by_hub(candidates, OTHER_FOLDER[lang]), [""] * len(candidates)
    existing = _existing(existing_folders)
    sizes = Counter(top for top in tops if top)
    largest = sorted(sizes, key=lambda top: (-sizes[top], tops.index(top)))
    keep = set(largest if len(largest) <= MAX_TOP_FOLDERS else largest[: MAX_TOP_FOLDERS - 1])
    assignments = []
    for candidate, top, sub in zip(candidates, tops, subs):
        key = str(candidate.get("pageKey") or candidate.get("slug") or "")
        if not key:
            continue
        if not top:
            path: list[str] = []
        elif name_identity(top) in existing:
            path = list(existing[name_identity(top)])
        elif top not in keep:
            path = [OTHER_FOLDER[lang]]
        else:
            siblings = {s for tp, s in zip(tops, subs) if tp == top and s}
            path = [top, sub] if sub and sizes[top] > MAX_TOP_FOLDERS and len(siblings) > 1 else [top]
        assignments.append({"pageKey": key, "path": path[:2]})
    return {"assignments": assignments}


def _by_section(candidates: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    paths = [_section_path(c) for c in candidates]
    common = _common_prefix([p for p in paths if p])
    tops: list[str] = []
    subs: list[str] = []
    for path in paths:
        rest = path[len(common) :]
        tops.append(rest[0] if rest else (common[-1] if common else ""))
        subs.append(rest[1] if len(rest) > 1 else "")
    return tops, subs


def _by_hub(candidates: Sequence[dict[str, Any]], other: str) -> list[str]:
    """Greedy cover: the name mentioned by the most not-yet-filed pages becomes a folder, while it files ≥ 2."""
    names = [str(c.get("name") or c.get("title") or "").strip() for c in candidates]
    texts = [f"{name}\n{c.get('summary', '')}" for name, c in zip(names, candidates)]
    covers = []
    for name in names:
        matcher = term_for(name) if name else None
        covers.append({i for i, text in enumerate(texts) if matcher and matcher.occurs_in(text)})
    limit = max(2, int(len(candidates) * HUB_MAX_SHARE)) if len(candidates) >= 6 else len(candidates)
    unfiled = set(range(len(candidates)))
    hubs: list[int] = []
    while len(hubs) < MAX_TOP_FOLDERS - 1:
        options = [h for h in range(len(names)) if h not in hubs and len(covers[h]) <= limit and _folder_worthy(names[h])]
        best = max(options, key=lambda h: (len(covers[h] & unfiled), -h), default=None)
        if best is None or len(covers[best] & unfiled) < 2:
            break
        hubs.append(best)
        unfiled -= covers[best]
    return [next((names[h] for h in hubs if i in covers[h]), other if hubs else "") for i in range(len(names))]


def _folder_worthy(name: str) -> bool:
    """Short acronyms (ID, API, JSON) are everywhere in technical text and say little about a group."""
    return not re.fullmatch(r"[A-Z0-9]{1,4}", name)


def _existing(existing_folders: Sequence[str]) -> dict[str, list[str]]:
    """Existing folders by the identity of their first and last parts, for reuse by name."""
    existing: dict[str, list[str]] = {}
    for folder in existing_folders:
        parts = _folder_parts(folder)
        if parts:
            existing.setdefault(name_identity(parts[0]), parts[:1])
            existing[name_identity(parts[-1])] = parts
    return existing


def _section_path(candidate: dict[str, Any]) -> list[str]:
    raw = candidate.get("headingPath") or candidate.get("section") or []
    parts = _folder_parts(raw) if isinstance(raw, str) else [strip_section_number(str(p)) for p in raw]
    return [p for p in parts if p and p.lower() not in KIND_FOLDER_NAMES]


def _folder_parts(folder: str) -> list[str]:
    return [p for p in _FOLDER_SPLIT.split(folder.strip()) if p and p.lower() not in KIND_FOLDER_NAMES]


def _common_prefix(paths: Sequence[list[str]]) -> list[str]:
    if len(paths) < 2:
        return []
    prefix: list[str] = []
    for parts in zip(*paths):
        if len(set(parts)) != 1:
            break
        prefix.append(parts[0])
    return prefix
