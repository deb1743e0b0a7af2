"""What the run has read: the only text an answer may quote, numbered e1, e2, … in order of reading.

Read is the one way text enters here; an item that would pass the run's evidence-character budget is not
added. A locator read twice keeps its first number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from petrichor_core.models.protocols import EvidenceText


def locator_of(item: dict[str, Any]) -> str:
    for key in ("chunk_id", "node_key", "page_key"):
        if item.get(key):
            return f"{key}:{item[key]}"
    return f"article_id:{item.get('article_id')}"


@dataclass
class Evidence:
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    """evidence_id -> the Read result"""
    by_locator: dict[str, str] = field(default_factory=dict)
    chars: int = 0

    def add(self, item: dict[str, Any], room: int) -> str | None:
        """The item's evidence id; None when it does not fit in `room` characters."""
        loc = locator_of(item)
        if loc in self.by_locator:
            return self.by_locator[loc]
        size = len(item.get("content") or "")
        if size > room:
            return None
        eid = f"e{len(self.items) + 1}"
        self.items[eid] = item
        self.by_locator[loc] = eid
        self.chars += size
        return eid

    def texts(self, ids: list[str] | None = None) -> list[EvidenceText]:
        """The passages as the answer models see them, in the given order (default: reading order)."""
        out = []
        for eid in ids or list(self.items):
            v = self.items[eid]
            out.append(EvidenceText(eid, v.get("article_title") or v.get("title") or "", tuple(v.get("heading_path", ())), v.get("content") or ""))
        return out

    def entries(self) -> list[dict[str, Any]]:
        """The answer's `evidence` list: one locator entry per read item (never the full text)."""
        return [
            {
                "evidence_id": eid,
                "kind": v["kind"],
                "chunk_id": v.get("chunk_id"),
                "node_key": v.get("node_key"),
                "page_key": v.get("page_key"),
                "article_id": v.get("article_id"),
                "article_version": v.get("article_version"),
                "title": v.get("article_title") or v.get("title"),
                "heading_path": v.get("heading_path", []),
                "start": v.get("start"),
                "end": v.get("end"),
            }
            for eid, v in self.items.items()
        ]
