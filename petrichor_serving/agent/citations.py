"""Citations checked server-side: every quote verbatim in read evidence, mapped to chunk, version and offsets.

An answer names evidence ids and quotes, whoever wrote it (the offline extractor or a model). A quote that
is not verbatim in what was read is dropped and reported; a quote that is, is located in its article
(chunk, article version, start and end). Markers are then renumbered 1..n in order of use, one marker per
distinct quote, so the same passage cited twice carries the same number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from petrichor_serving.agent.evidence import Evidence
from petrichor_serving.snapshot import Snapshot

_MARKER = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True)
class Checked:
    citations: list[dict[str, Any]]
    """Verified citations keyed by the answer's own markers (before renumbering)."""
    dropped: list[dict[str, Any]]


def _chunk_at(snap: Snapshot, article_id: str, start: int) -> str | None:
    for cid in snap.chunks_by_article.get(article_id, []):
        c = snap.chunks[cid]
        if c["start"] <= start < c["end"]:
            return cid
    return None


def locate(snap: Snapshot, item: dict[str, Any], quote: str) -> tuple[str, int, int] | None:
    """(chunk_id, start, end) of `quote` in the item's article, or None when it is not verbatim there."""
    pos = (item.get("content") or "").find(quote)
    if pos < 0 or not item.get("article_id") or item["article_id"] not in snap.articles:
        return None
    content = snap.articles[item["article_id"]]["content"]
    if item.get("start") is not None:
        start = item["start"] + pos
    elif item.get("node_key") in snap.nodes:
        # a tree node's text is its article's lines from start_line on: find the quote from there
        row = snap.nodes[item["node_key"]]
        line_offset = sum(len(line) + 1 for line in content.split("\n")[: max(row["start_line"] - 1, 0)])
        start = content.find(quote, line_offset)
    else:
        return None
    if start < 0 or content[start : start + len(quote)] != quote:
        return None
    if item.get("chunk_id") and item["start"] is not None and item.get("end") is not None and start + len(quote) <= item["end"]:
        return item["chunk_id"], start, start + len(quote)
    cid = _chunk_at(snap, item["article_id"], start)
    return (cid, start, start + len(quote)) if cid else None


def check(snap: Snapshot, evidence: Evidence, cited: list[Any]) -> Checked:
    """Keep the citations whose quote is verbatim in read evidence (the named item first, then any)."""
    out: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    for n, c in enumerate(cited, 1):
        if not isinstance(c, dict) or not isinstance(c.get("quote"), str) or not c["quote"].strip():
            dropped.append({"citation": c, "reason": "no quote"})
            continue
        quote = c["quote"].strip()
        eid = str(c.get("evidence_id", ""))
        order = ([eid] if eid in evidence.items else []) + [k for k in evidence.items if k != eid]
        found = None
        for key in order:
            found = locate(snap, evidence.items[key], quote)
            if found:
                eid = key
                break
        if not found:
            dropped.append({"evidence_id": c.get("evidence_id"), "quote": quote[:300], "reason": "not verbatim in read evidence"})
            continue
        cid, start, end = found
        item = evidence.items[eid]
        article = snap.articles[item["article_id"]]
        try:
            marker = int(c.get("marker") or n)
        except (TypeError, ValueError):
            marker = n
        out.append(
            {
                "marker": marker,
                "evidence_id": eid,
                "chunk_id": cid,
                "article_id": item["article_id"],
                "article_version": article["article_version"],
                "title": article["title"],
                "heading_path": list(snap.chunks[cid]["heading_path"]),
                "quote_start": start,
                "quote_end": end,
                "quote": quote,
            }
        )
    return Checked(out, dropped)


def renumber(text: str, citations: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Markers become 1..n in order of first use, one per distinct quote; a marker without a checked
    citation is removed."""
    by_marker: dict[int, dict[str, Any]] = {}
    for c in citations:
        by_marker.setdefault(c["marker"], c)
    key_of = {m: (c.get("chunk_id"), c.get("quote_start"), c["quote"]) for m, c in by_marker.items()}
    new_of_key: dict[Any, int] = {}
    new_of_marker: dict[int, int] = {}
    for m in [int(x.group(1)) for x in _MARKER.finditer(text)] + list(by_marker):
        if m in by_marker and m not in new_of_marker:
            new_of_marker[m] = new_of_key.setdefault(key_of[m], len(new_of_key) + 1)

    def sub(m: re.Match[str]) -> str:
        new = new_of_marker.get(int(m.group(1)))
        return f"[{new}]" if new else ""

    text = _MARKER.sub(sub, text)
    text = re.sub(r"(\[\d+\])(\s*\1)+", r"\1", text)  # one passage cited twice in a row: once
    out: dict[int, dict[str, Any]] = {}
    for m, c in by_marker.items():
        out.setdefault(new_of_marker[m], {**c, "marker": new_of_marker[m]})
    return re.sub(r"[ \t]+([。.，,；;])", r"\1", text).strip(), [out[k] for k in sorted(out)]
