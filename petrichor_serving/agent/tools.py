"""The agent's tools over one snapshot: Search, Outline, Read and Read Many.

Search returns locators and snippets only; Read is the single way full text enters Evidence. Every
tool applies the caller's scope itself, so a locator guessed from outside the scope reads as not found
(indistinguishable from a locator that does not exist).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from petrichor_serving.errors import ToolError
from petrichor_serving.recall.access import Scope
from petrichor_serving.recall.config import DEFAULT_CONFIG, RecallConfig
from petrichor_serving.recall.pipeline import search as recall_search
from petrichor_serving.recall.query import Query
from petrichor_serving.snapshot import Snapshot
from petrichor_serving.toolspec import DEFAULT_OUTLINE_NODES, MAX_OUTLINE_NODES, MAX_READ_MANY, MIN_OUTLINE_NODES


def _article_allowed(snap: Snapshot, scope: Scope, article_id: str) -> bool:
    return article_id in snap.recall.allowed_article_ids(scope)


def _page_allowed(snap: Snapshot, scope: Scope, page: dict[str, Any]) -> bool:
    return snap.recall.page_allowed(scope, page)


def search(
    snap: Snapshot,
    scope: Scope,
    query: str,
    *,
    embedder: Any = None,
    limit: int | None = None,
    sub_queries: Sequence[str] | None = None,
    config: RecallConfig = DEFAULT_CONFIG,
) -> dict[str, Any]:
    """Search's answer over the snapshot; `limit` None: `config.limit`. The query is checked here unless it
    arrives as a `Query` (the HTTP schema's)."""
    try:
        query = Query.of(query)
    except ValueError as err:
        raise ToolError(str(err)) from None
    result = recall_search(snap.recall, query, scope=scope, embedder=embedder, limit=limit, sub_queries=sub_queries, config=config)
    return {
        "query": query,
        "snapshot_version": snap.version,
        "candidates": [c.to_json() for c in result.candidates],
        "diagnostics": result.diagnostics,
    }


def outline(snap: Snapshot, scope: Scope, article_id: str, *, max_nodes: int = DEFAULT_OUTLINE_NODES) -> dict[str, Any]:
    """The article's PageIndex tree, or a light tree rebuilt from chunk heading paths and questions."""
    if not article_id or not _article_allowed(snap, scope, article_id):
        raise ToolError(f"article {article_id!r} not found", 404)
    art = snap.articles[article_id]
    max_nodes = max(MIN_OUTLINE_NODES, min(int(max_nodes), MAX_OUTLINE_NODES))
    node_keys = snap.nodes_by_article.get(article_id, [])
    nodes: list[dict[str, Any]]
    if node_keys:
        source = "wiki_tree"
        rows = sorted((snap.nodes[k] for k in node_keys), key=lambda n: n["position"])
        nodes = [
            {
                "node_key": n["node_key"],
                "parent_key": n["parent_key"] or None,
                "depth": n["depth"],
                "position": n["position"],
                "title": n["title"],
                "summary": n["summary"],
                "token_estimate": n["token_estimate"],
            }
            for n in rows
        ]
    else:
        source = "chunk_headings" if snap.chunks_by_article.get(article_id) else "none"
        nodes = []
        for cid in snap.chunks_by_article.get(article_id, []):
            c = snap.chunks[cid]
            path = list(c["heading_path"])
            nodes.append(
                {
                    "chunk_id": cid,
                    "depth": max(len(path) - 1, 0),
                    "title": c["heading"],
                    "path": " > ".join(path),
                    "token_estimate": len(c["content"]) // 3,
                    "questions": snap.questions_by_chunk.get(cid, [])[:3],
                }
            )
    return {
        "article_id": article_id,
        "kb_id": art["kb_id"],
        "title": art["title"],
        "article_version": art["article_version"],
        "source": source,
        "node_count": len(nodes),
        "truncated": len(nodes) > max_nodes,
        "nodes": nodes[:max_nodes],
    }


def _read_chunk(snap: Snapshot, scope: Scope, chunk_id: str, window: Any = None) -> dict[str, Any]:
    c = snap.chunks.get(chunk_id)
    if c is None or not _article_allowed(snap, scope, c["article_id"]):
        raise ToolError(f"chunk {chunk_id!r} not found", 404)
    art = snap.articles[c["article_id"]]
    return {
        "kind": "chunk",
        "chunk_id": chunk_id,
        "article_id": c["article_id"],
        "article_version": art["article_version"],
        "kb_id": c["kb_id"],
        "title": c["heading"],
        "article_title": art["title"],
        "heading_path": list(c["heading_path"]),
        "content": c["content"],
        "start": c["start"],
        "end": c["end"],
        "questions": snap.questions_by_chunk.get(chunk_id, []),
        **_matched_window(snap, chunk_id, window),
    }


def _matched_window(snap: Snapshot, chunk_id: str, window: Any) -> dict[str, Any]:
    """The search candidate's matched child window (`{"window_id", ...}`), when it is one of this chunk's."""
    w = snap.windows.get(wid) if isinstance(window, dict) and (wid := window.get("window_id")) is not None else None
    if w is None or w["chunk_id"] != chunk_id:
        return {}
    return {"window": {"window_id": w["window_id"], "start": w["start"], "end": w["end"]}}


def _read_page(snap: Snapshot, scope: Scope, page_key: str, kb_id: str | None) -> dict[str, Any]:
    matches = [
        p for (kb, _tenant, key), p in snap.pages.items() if key == page_key and (kb_id is None or kb == kb_id) and _page_allowed(snap, scope, p)
    ]
    if not matches:
        raise ToolError(f"wiki page {page_key!r} not found", 404)
    p = matches[0]
    ident = (p["kb_id"], p["tenant"], p["page_key"])

    def visible(key: str) -> bool:
        other = snap.pages.get((p["kb_id"], p["tenant"], key))
        return other is not None and _page_allowed(snap, scope, other)

    return {
        "kind": "wiki_page",
        "page_key": p["page_key"],
        "kb_id": p["kb_id"],
        "page_kind": p["kind"],
        "title": p["title"],
        "summary": p["summary"],
        "aliases": list(p["aliases"] or []),
        "content": p["content_md"],
        "links": [
            {"page_key": link["to_page_key"], "link_type": link["link_type"], "description": link["description"]}
            for link in snap.links_from.get(ident, [])
            if visible(link["to_page_key"])
        ],
        "backlinks": [
            {"page_key": link["from_page_key"], "link_type": link["link_type"]}
            for link in snap.links_to.get(ident, [])
            if visible(link["from_page_key"])
        ],
        "article_ids": [a for a in p["article_ids"] or [] if _article_allowed(snap, scope, a)],
    }


def _read_node(snap: Snapshot, scope: Scope, node_key: str) -> dict[str, Any]:
    n = snap.nodes.get(node_key)
    if n is None or not _article_allowed(snap, scope, n["article_id"]):
        raise ToolError(f"node {node_key!r} not found", 404)
    out = {
        "kind": "tree_node",
        "node_key": node_key,
        "article_id": n["article_id"],
        "article_version": snap.articles[n["article_id"]]["article_version"],
        "title": n["title"],
        "summary": n["summary"],
        "depth": n["depth"],
        "content": n["content"],
        "content_from": "node",
    }
    if not n["content"].strip():
        # an empty heading node reads as its whole subtree, in document order
        children: dict[str, list[dict[str, Any]]] = {}
        for k in snap.nodes_by_article.get(n["article_id"], []):
            m = snap.nodes[k]
            children.setdefault(m["parent_key"] or "", []).append(m)
        parts: list[str] = []

        def walk(key: str) -> None:
            for child in sorted(children.get(key, []), key=lambda m: m["position"]):
                parts.append("#" * max(child["depth"], 1) + " " + child["title"] + ("\n\n" + child["content"] if child["content"] else ""))
                walk(child["node_key"])

        walk(node_key)
        out["content"] = "\n\n".join(parts)
        out["content_from"] = "subtree"
    return out


def _read_article(snap: Snapshot, scope: Scope, article_id: str) -> dict[str, Any]:
    if not _article_allowed(snap, scope, article_id):
        raise ToolError(f"article {article_id!r} not found", 404)
    a = snap.articles[article_id]
    return {
        "kind": "article",
        "article_id": article_id,
        "article_version": a["article_version"],
        "kb_id": a["kb_id"],
        "title": a["title"],
        "content": a["content"],
        "start": 0,
        "end": len(a["content"]),
    }


def read(snap: Snapshot, scope: Scope, target: dict[str, Any]) -> dict[str, Any]:
    """Read one locator: exactly one of chunk_id, page_key, node_key (article_id only when none is given)."""
    locators = {k: target.get(k) for k in ("chunk_id", "page_key", "node_key") if target.get(k)}
    if len(locators) > 1:
        raise ToolError("give exactly one of chunk_id, page_key, node_key, article_id")
    if "chunk_id" in locators:
        return _read_chunk(snap, scope, str(locators["chunk_id"]), target.get("window"))
    if "page_key" in locators:
        return _read_page(snap, scope, str(locators["page_key"]), target.get("kb_id"))
    if "node_key" in locators:
        return _read_node(snap, scope, str(locators["node_key"]))
    if target.get("article_id"):
        return _read_article(snap, scope, str(target["article_id"]))
    raise ToolError("give exactly one of chunk_id, page_key, node_key, article_id")


def read_many(snap: Snapshot, scope: Scope, targets: Sequence[dict[str, Any]], *, max_items: int = MAX_READ_MANY) -> dict[str, Any]:
    if not targets:
        raise ToolError("targets must hold at least one locator")
    if len(targets) > MAX_READ_MANY:
        raise ToolError(f"at most {MAX_READ_MANY} targets per read")
    results, failures = [], []
    for t in list(targets)[:max_items]:
        try:
            results.append(read(snap, scope, t))
        except ToolError as exc:
            failures.append({"target": t, "error": str(exc)})
    return {"results": results, "requested_count": len(targets), "skipped_count": max(0, len(targets) - max_items), "failures": failures}
