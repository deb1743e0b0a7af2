"""The OpenAPI 3.1 document served at `/openapi.json`, written out so clients can generate bindings."""

from __future__ import annotations

from typing import Any

_LOCATOR = {
    "type": "object",
    "properties": {
        "chunk_id": {"type": "string"},
        "page_key": {"type": "string"},
        "node_key": {"type": "string"},
        "article_id": {"type": "string"},
        "kb_id": {"type": "string"},
    },
    "description": "Exactly one of chunk_id, page_key, node_key; article_id alone reads the whole article.",
}
_ERROR = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}
_CANDIDATE = {
    "type": "object",
    "properties": {
        "chunk_id": {"type": "string"},
        "page_key": {"type": "string"},
        "node_key": {"type": "string"},
        "article_id": {"type": "string"},
        "title": {"type": "string"},
        "heading_path": {"type": "array", "items": {"type": "string"}},
        "snippet": {"type": "string"},
        "routes": {"type": "array", "items": {"type": "string"}},
        "score": {"type": "number"},
    },
    "required": ["article_id", "title", "heading_path", "snippet", "routes", "score"],
}
_CITATION = {
    "type": "object",
    "properties": {
        "marker": {"type": "integer"},
        "chunk_id": {"type": "string"},
        "article_id": {"type": "string"},
        "article_version": {"type": "string"},
        "heading_path": {"type": "array", "items": {"type": "string"}},
        "quote_start": {"type": "integer"},
        "quote_end": {"type": "integer"},
        "quote": {"type": "string"},
    },
    "required": ["marker", "chunk_id", "article_id", "article_version", "quote_start", "quote_end", "quote"],
}
_ANSWER = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "citations": {"type": "array", "items": _CITATION},
        "evidence": {"type": "array", "items": {"type": "object"}},
        "trace_id": {"type": "string"},
    },
    "required": ["answer", "citations", "evidence", "trace_id"],
}
_QUESTION = {
    "type": "object",
    "properties": {"question": {"type": "string", "maxLength": 8000}, "kb_ids": {"type": "array", "items": {"type": "string"}}},
    "required": ["question"],
}


def _post(summary: str, request: dict[str, Any], response: dict[str, Any], secured: bool = True) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary,
        "requestBody": {"required": True, "content": {"application/json": {"schema": request}}},
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {"schema": response}}},
            "400": {"description": "Bad input", "content": {"application/json": {"schema": _ERROR}}},
            "404": {"description": "Not found or out of scope", "content": {"application/json": {"schema": _ERROR}}},
            "413": {"description": "Body over 512 KiB", "content": {"application/json": {"schema": _ERROR}}},
            "503": {"description": "No snapshot loaded", "content": {"application/json": {"schema": _ERROR}}},
        },
    }
    if secured:
        op["security"] = [{"apiKey": []}]
        op["responses"]["401"] = {"description": "Missing or invalid API key", "content": {"application/json": {"schema": _ERROR}}}
    else:
        op["security"] = []
    return op


def openapi_document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Petrichor", "version": "0.1.0", "description": "Read-only knowledge search and cited answers."},
        "components": {"securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}}},
        "paths": {
            "/healthz": {"get": {"summary": "Liveness and the served snapshot version", "responses": {"200": {"description": "OK"}}}},
            "/api/snapshot": {"get": {"summary": "Current and refused snapshot versions", "responses": {"200": {"description": "OK"}}}},
            "/api/knowledge/search": {
                "post": _post(
                    "Hybrid search: locators, titles, heading paths, snippets, routes, scores (never full text)",
                    {
                        "type": "object",
                        "properties": {
                            "query": {"type": "string", "maxLength": 8000},
                            "kb_ids": {"type": "array", "items": {"type": "string"}},
                            "article_id": {"type": "string"},
                            "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                            "sub_queries": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                        },
                        "required": ["query"],
                    },
                    {
                        "type": "object",
                        "properties": {
                            "query": {"type": "string"},
                            "snapshot_version": {"type": "string"},
                            "candidates": {"type": "array", "items": _CANDIDATE},
                            "diagnostics": {"type": "object"},
                        },
                    },
                )
            },
            "/api/knowledge/outline": {
                "post": _post(
                    "An article's PageIndex tree, or a light tree from chunk headings",
                    {"type": "object", "properties": {"article_id": {"type": "string"}, "max_nodes": {"type": "integer"}}, "required": ["article_id"]},
                    {"type": "object"},
                )
            },
            "/api/knowledge/read": {
                "post": _post(
                    "Read one locator, or up to 4 with `targets`",
                    {"oneOf": [_LOCATOR, {"type": "object", "properties": {"targets": {"type": "array", "items": _LOCATOR, "maxItems": 4}}}]},
                    {"type": "object"},
                )
            },
            "/api/assistant/chat": {"post": _post("Cited answer over the key's knowledge bases", _QUESTION, _ANSWER)},
            "/api/public/qa/chat": {"post": _post("Cited answer over public shares only", _QUESTION, _ANSWER, secured=False)},
        },
    }
