"""One article's full text and versions, for opening a citation where it was quoted.

`GET /api/articles/{article_id}` reads within the caller's key scope and `GET /api/public/articles/{article_id}`
within public shares only, by the same rule every read tool applies: an article outside the scope is
not found, exactly like one that does not exist. `?chunk_id=` adds that chunk's heading path when the
chunk belongs to the article. Citation offsets index `content` in code points.
"""

from __future__ import annotations

from typing import Any

from petrichor_serving.agent import tools
from petrichor_serving.endpoints import Call


def _article(call: Call) -> dict[str, Any]:
    snap = call.snapshot()
    article_id = call.request.path_params["article_id"]
    read = tools.read(snap, call.scope(kb_ids=None), {"article_id": article_id})
    doc = {
        "article_id": read["article_id"],
        "article_version": read["article_version"],
        "kb_id": read["kb_id"],
        "title": read["title"],
        "content": read["content"],
        "snapshot_version": snap.version,
    }
    chunk = snap.chunks.get(call.request.query_params.get("chunk_id", ""))
    if chunk is not None and chunk["article_id"] == article_id:
        doc["heading_path"] = list(chunk["heading_path"])
    return doc


async def article(call: Call) -> dict[str, Any]:
    return _article(call)  # the key's scope (Call.scope): secured endpoint


async def public_article(call: Call) -> dict[str, Any]:
    return _article(call)  # public shares only (Call.scope with no principal); its own OpenAPI operation
