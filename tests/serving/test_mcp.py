"""The MCP SDK's own client against the four knowledge tools: over streamable HTTP (`/mcp` of a real
`petrichor serve`) and over stdio (`petrichor mcp`), each scoped by an API key.

acme's key reads petrichor-zh only, globex's petrichor-en only: nothing of the other tenant's text ever
reaches a key's results, and a locator of the other tenant is refused as not found.
"""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.serving.live import REPO

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess

TOOLS = {"knowledge_search", "knowledge_outline", "knowledge_read", "knowledge_read_many"}
QUERY = "snapshot CURRENT atomic swap 快照 原子 切换"


@asynccontextmanager
async def _http(live_server, key: str | None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        async with Client(streamable_http_client(f"{live_server.url}/mcp", http_client=http)) as client:
            yield client


def _stdio(live_server, key: str) -> Client:
    env = {**live_server.env, "PETRICHOR_API_KEY": key}
    return Client(
        StdioServerParameters(command=sys.executable, args=["-m", "petrichor.cli", "mcp"], env=env, cwd=str(REPO)), read_timeout_seconds=120
    )


def _foreign(live_server, tenant_key: str) -> dict[str, Any]:
    """Another tenant's locators and text, read over REST with that tenant's key."""
    auth = {"Authorization": f"Bearer {tenant_key}"}
    found = httpx.post(f"{live_server.url}/api/knowledge/search", json={"query": QUERY, "limit": 20}, headers=auth, timeout=60).json()
    chunk = next(c for c in found["candidates"] if c.get("chunk_id"))
    read = httpx.post(f"{live_server.url}/api/knowledge/read", json={"chunk_id": chunk["chunk_id"]}, headers=auth, timeout=60).json()
    return {
        "article_ids": {c["article_id"] for c in found["candidates"]},
        "chunk_id": chunk["chunk_id"],
        "article_id": chunk["article_id"],
        "text": read["results"][0]["content"],
    }


async def _exercise(client: Client, foreign: dict[str, Any]) -> None:
    listed = await client.list_tools()
    by_name = {t.name: t for t in listed.tools}
    assert set(by_name) == TOOLS
    assert by_name["knowledge_search"].input_schema["required"] == ["query"]
    assert by_name["knowledge_read_many"].input_schema["properties"]["targets"]["maxItems"] == 4
    assert all(t.annotations.read_only_hint for t in listed.tools)

    dumps: list[str] = []

    async def call(name: str, args: dict[str, Any]) -> Any:
        res = await client.call_tool(name, args)
        dumps.append(json.dumps(res.structured_content, ensure_ascii=False) + "".join(getattr(c, "text", "") for c in res.content))
        return res

    found = await call("knowledge_search", {"query": QUERY, "limit": 20})
    assert not found.is_error and found.structured_content["candidates"]
    hits = found.structured_content["candidates"]
    assert not {c["article_id"] for c in hits} & foreign["article_ids"]
    chunk = next(c for c in hits if c.get("chunk_id"))
    outline = await call("knowledge_outline", {"article_id": chunk["article_id"]})
    assert not outline.is_error and outline.structured_content["node_count"] > 0
    read = await call("knowledge_read", {"chunk_id": chunk["chunk_id"]})
    assert not read.is_error and read.structured_content["kind"] == "chunk" and read.structured_content["content"]
    many = await call(
        "knowledge_read_many", {"targets": [{"chunk_id": chunk["chunk_id"]}, {"article_id": chunk["article_id"]}, {"chunk_id": foreign["chunk_id"]}]}
    )
    assert not many.is_error
    assert len(many.structured_content["results"]) == 2 and len(many.structured_content["failures"]) == 1

    # the other tenant's locators read as not found; its text never appears
    for name, args in (
        ("knowledge_read", {"chunk_id": foreign["chunk_id"]}),
        ("knowledge_read", {"article_id": foreign["article_id"]}),
        ("knowledge_outline", {"article_id": foreign["article_id"]}),
    ):
        refused = await call(name, args)
        assert refused.is_error and "not found" in refused.content[0].text
    bad = await call("knowledge_read", {"chunk_id": "a", "page_key": "b"})
    assert bad.is_error and "exactly one" in bad.content[0].text
    # a field of the wrong shape is a tool error naming it, never a server error
    for window in ([], {}, [1, 2]):
        for name, args in (
            ("knowledge_read_many", {"targets": [{"chunk_id": chunk["chunk_id"], "window": {"window_id": window}}]}),
            ("knowledge_read", {"chunk_id": chunk["chunk_id"], "window": {"window_id": window}}),
        ):
            wrong = await call(name, args)
            text = wrong.content[0].text
            assert wrong.is_error and "window_id" in text and "Traceback" not in text and "TypeError" not in text, text
    assert len(foreign["text"]) > 80 and not [d for d in dumps if foreign["text"][:80] in d]


def test_streamable_http_lists_and_calls_the_four_tools_within_the_key(live_server):
    foreign = _foreign(live_server, "globex-key")

    async def main() -> None:
        async with _http(live_server, "acme-key") as client:
            await _exercise(client, foreign)

    anyio.run(main)


def test_streamable_http_refuses_a_missing_or_unknown_key(live_server):
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        res = httpx.post(
            f"{live_server.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={**headers, "Accept": "application/json, text/event-stream"},
        )
        assert res.status_code == 401 and res.json()["error"]


def test_stdio_lists_and_calls_the_four_tools_within_the_key(live_server):
    foreign = _foreign(live_server, "acme-key")

    async def main() -> None:
        async with _stdio(live_server, "globex-key") as client:
            await _exercise(client, foreign)

    anyio.run(main)


def test_stdio_without_a_valid_key_does_not_start(live_server):
    import subprocess

    env = {**live_server.env, "PETRICHOR_API_KEY": "wrong"}
    out = subprocess.run([sys.executable, "-m", "petrichor.cli", "mcp"], env=env, cwd=REPO, input="", capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "PETRICHOR_API_KEY" in out.stderr and out.stdout == ""
