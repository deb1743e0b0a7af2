"""Tenant isolation: every text endpoint of `ENDPOINTS` × every kind of caller, on a two-tenant corpus.

Callers: tenant alpha's key, tenant beta's key, a key of tenant alpha limited to `alpha-notes`, and no key
(public shares only; a secured endpoint answers 401). What a caller may read follows from the endpoint's
`secured` flag: a key's tenant and knowledge bases on a secured endpoint, public unexpired password-free
shares everywhere else. For each pair the test asserts

- no response body holds an id, path, title or marker (a token found in one article's text only) of an
  article the caller may not read, nor the id of a knowledge base it reads nothing of (case-insensitive:
  wiki page keys lower-case what they name);
- naming such an article's locator gets exactly the answer a locator that does not exist gets: the same
  status and the same body once the locator itself and the volatile fields (timings, trace ids) are
  blanked, so no endpoint is an existence oracle.

Every route of `ENDPOINTS` needs a row in `ROWS` or an entry, with its reason, in `EXCLUDED`.

The past rows run the rows of every route that reads a snapshot (`PAST_ROUTES`) again over the past pair
(`corpus.CHANGES`: a tenant moved, a share withdrawn, a share expired, a knowledge base out of the key's
scope, an article deleted), each request naming the first build's snapshot: a caller reads there only
what it may read in that snapshot and today, and an article deleted since reads as one that never was.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import pytest

from petrichor_serving.app import ENDPOINTS
from tests.security.conftest import KEYS
from tests.security.corpus import ARTICLES, CHANGES, KBS, NOW, PAST, Article

pytestmark = pytest.mark.slow  # builds a corpus

PRINCIPALS: dict[str, str | None] = {"alpha": "alpha-key", "beta": "beta-key", "alpha-notes": "alpha-notes-key", "public": None}
QUESTION = "How does the tide ledger record a harbour gauge reading and its corrections?"
MISSING_ARTICLE = hashlib.sha256(b"nowhere/missing.md").hexdigest()[:16]
MISSING_VERSION = "0" * 64
BLANK = "<locator>"
EXCLUDED = {
    ("GET", "/healthz"): "liveness and the snapshot version only",
    ("GET", "/openapi.json"): "the API description, built from the table at import",
    ("GET", "/mcp"): "MCP's server-to-client event stream: stateless, it carries no tool result (those are POST /mcp replies)",
}
_VOLATILE = {"timingsMs", "trace_id", "id", "created", "elapsed_ms", "duration_ms"}
_SSE_DATA = re.compile(r"^data: (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class World:
    """The snapshot's articles as the test sees them, and what one caller may read on one endpoint."""

    chunks: dict[str, list[str]]
    """article_id -> its chunk ids"""
    nodes: dict[str, list[str]]
    pages: dict[tuple[str, str, str], Any]
    versions: dict[str, str]
    ids: dict[str, Article]
    """article_id -> the generated article (as it is now, where it still exists)"""
    deleted: frozenset[str] = frozenset()
    """Articles of an older snapshot that the current one no longer holds: readable by no one."""

    def readable(self, key: str | None, secured: bool) -> set[str]:
        if key is None or not secured:
            found = {a for a, art in self.ids.items() if art.front_matter.strip() == "visibility: public"}
        else:
            grant = KEYS[key]
            found = {a for a, art in self.ids.items() if art.tenant == grant["tenant"] and (grant["kbs"] == "*" or art.kb_id in grant["kbs"])}
        return found - self.deleted

    def forbidden(self, readable: set[str]) -> set[str]:
        """Lower-cased strings that only an unreadable article (or knowledge base) could put into a body."""
        out: set[str] = set()
        for aid, art in self.ids.items():
            if aid not in readable:
                out |= {aid, art.relpath, art.title, art.marker, self.versions[aid]}
        read_kbs = {self.ids[a].kb_id for a in readable}
        out |= {kb for kb in KBS if kb not in read_kbs}
        return {s.lower() for s in out}


@dataclass
class Cell:
    """One (endpoint, caller) pair: requests whose bodies must hold nothing forbidden, and probes whose
    foreign and missing answers must match."""

    client: Any
    world: World
    name: str
    key: str | None
    secured: bool
    snapshot_version: str | None = None
    """Named in every request (MCP: in every tool's arguments); None: the current snapshot."""
    bodies: list[tuple[str, str]] = field(default_factory=list)
    """(what was asked, response body) of every request made"""

    @property
    def readable(self) -> set[str]:
        return self.world.readable(self.key, self.secured)

    @property
    def foreign(self) -> list[str]:
        """The unreadable articles, another tenant's private one first."""
        return sorted(set(self.world.ids) - self.readable, key=lambda a: (self.world.ids[a].front_matter != "", self.world.ids[a].relpath))

    @property
    def own(self) -> str | None:
        return min(self.readable, key=lambda a: self.world.ids[a].relpath, default=None)

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        auth = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        return {**auth, **(extra or {})}

    def send(
        self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None, extra: dict[str, str] | None = None
    ) -> tuple[int, str]:
        if self.snapshot_version and isinstance(json_body, dict):
            json_body = _naming(json_body, self.snapshot_version)
        res = self.client.request(method, path, json=json_body, params=params, headers=self.headers(extra))
        self.bodies.append((f"{method} {path} {json.dumps(json_body)} {params}", res.text))
        return res.status_code, res.text

    def probe(self, ask: Callable[[Any], tuple[int, str]], foreign: str | tuple[str, ...], missing: str | tuple[str, ...]) -> None:
        """Asking for `foreign` (unreadable) answers exactly as asking for `missing` (nonexistent); a locator
        of several parts (a citation's article and version) is a tuple."""
        got, want = ask(foreign), ask(missing)
        assert got[0] == want[0], (self.name, foreign, got, want)
        assert _normal(got[1], foreign) == _normal(want[1], missing), (self.name, foreign, got[1][:400], want[1][:400])
        self.bodies[-2] = (self.bodies[-2][0], _blank(self.bodies[-2][1], foreign))  # the echo of what was asked


def _naming(body: dict[str, Any], version: str) -> dict[str, Any]:
    """`body` asking for the snapshot `version`: an MCP tool call names it among the tool's arguments."""
    if isinstance(body.get("params"), dict) and "arguments" in body["params"]:
        return {**body, "params": {**body["params"], "arguments": {**body["params"]["arguments"], "snapshot_version": version}}}
    return {**body, "snapshot_version": version}


def _blank(body: str, locator: str | tuple[str, ...]) -> str:
    for part in (locator,) if isinstance(locator, str) else locator:
        body = body.replace(part, BLANK)
    return body


def _normal(body: str, locator: str | tuple[str, ...]) -> Any:
    """A body with `locator` blanked, parsed (JSON, or the JSON of each server-sent event), volatile fields dropped."""
    text = _blank(body, locator)
    events = _SSE_DATA.findall(text)
    docs = [e for e in events if e != "[DONE]"] if events else [text]
    return [_drop_volatile(_parse(d)) for d in docs]


def _parse(text: str) -> Any:
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    for item in doc.get("result", {}).get("content", []) if isinstance(doc, dict) and isinstance(doc.get("result"), dict) else []:
        if isinstance(item, dict) and "text" in item:
            item["text"] = _parse(item["text"])  # MCP: a tool result is JSON inside a text item
    return doc


def _drop_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_volatile(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_drop_volatile(v) for v in value]
    return value


# --- the rows: what each endpoint is asked, as the caller and about foreign locators ---------------------


def _search(cell: Cell) -> None:
    cell.send("POST", "/api/knowledge/search", json_body={"query": QUESTION, "limit": 20})

    def ask(aid: str) -> tuple[int, str]:
        return cell.send("POST", "/api/knowledge/search", json_body={"query": QUESTION, "article_id": aid})

    cell.probe(ask, cell.foreign[0], MISSING_ARTICLE)


def _outline(cell: Cell) -> None:
    if cell.own:
        cell.send("POST", "/api/knowledge/outline", json_body={"article_id": cell.own})
    for aid in cell.foreign:
        cell.probe(lambda a: cell.send("POST", "/api/knowledge/outline", json_body={"article_id": a}), aid, MISSING_ARTICLE)


def _locators(cell: Cell) -> Iterator[tuple[dict[str, str], dict[str, str]]]:
    """(foreign locator, missing locator of the same kind) for each unreadable article and locator kind."""
    w = cell.world
    for aid in cell.foreign:
        yield {"article_id": aid}, {"article_id": MISSING_ARTICLE}
        yield {"chunk_id": w.chunks[aid][0]}, {"chunk_id": f"{MISSING_ARTICLE}:chunk-001"}
        yield {"node_key": w.nodes[aid][-1]}, {"node_key": f"a{MISSING_ARTICLE}-root"}
        page = f"entity-{w.ids[aid].marker.lower()}"  # the wiki names each marker: a page only this article feeds
        kb = w.ids[aid].kb_id
        if (kb, w.ids[aid].tenant, page) in w.pages:
            yield {"page_key": page, "kb_id": kb}, {"page_key": "entity-no-such-page", "kb_id": kb}


def _read(cell: Cell) -> None:
    if cell.own:
        cell.send("POST", "/api/knowledge/read", json_body={"article_id": cell.own})
        cell.send("POST", "/api/knowledge/read", json_body={"chunk_id": cell.world.chunks[cell.own][0]})
    for foreign, missing in _locators(cell):
        kind = next(k for k in foreign if k != "kb_id")
        cell.probe(lambda v: cell.send("POST", "/api/knowledge/read", json_body={**foreign, kind: v}), foreign[kind], missing[kind])


def _read_many(cell: Cell) -> None:
    own = [{"article_id": cell.own}, {"chunk_id": cell.world.chunks[cell.own][0]}] if cell.own else []

    def ask(aid: str) -> tuple[int, str]:
        return cell.send("POST", "/api/knowledge/read", json_body={"targets": [*own, {"article_id": aid}, {"chunk_id": f"{aid}:chunk-001"}]})

    for aid in cell.foreign[:2]:  # the failures echo the targets asked for, nothing else
        cell.probe(ask, aid, MISSING_ARTICLE)


def _chat(path: str, focus: bool) -> Callable[[Cell], None]:
    def run(cell: Cell) -> None:
        cell.send("POST", path, json_body={"question": QUESTION})
        if focus:  # an article focus the caller may not read is an article that does not exist

            def ask_article(aid: str) -> tuple[int, str]:
                return cell.send("POST", path, json_body={"question": QUESTION, "article_id": aid})

            cell.probe(ask_article, cell.foreign[0], MISSING_ARTICLE)

        def ask_kb(kb: str) -> tuple[int, str]:
            return cell.send("POST", path, json_body={"question": QUESTION, "kb_ids": [kb]})

        unread = sorted(kb for kb in KBS if kb.lower() in cell.world.forbidden(cell.readable))
        if unread:
            cell.probe(ask_kb, unread[0], "no-such-kb")

    return run


def _articles(path: str) -> Callable[[Cell], None]:
    def run(cell: Cell) -> None:
        if cell.own:
            cell.send("GET", f"{path}/{cell.own}")
        for aid in cell.foreign:
            cell.probe(lambda a: cell.send("GET", f"{path}/{a}"), aid, MISSING_ARTICLE)
            if cell.own:  # another article's chunk adds no heading path

                def ask(c: str) -> tuple[int, str]:
                    return cell.send("GET", f"{path}/{cell.own}", params={"chunk_id": c})

                cell.probe(ask, cell.world.chunks[aid][0], f"{MISSING_ARTICLE}:chunk-001")

    return run


def _citations(path: str) -> Callable[[Cell], None]:
    def run(cell: Cell) -> None:
        def ask(ref: tuple[str, str]) -> tuple[int, str]:
            return cell.send("GET", path, params={"article_id": ref[0], "article_version": ref[1], "start": 0, "end": 12})

        if cell.own:
            ask((cell.own, cell.world.versions[cell.own]))
        for aid in cell.foreign:
            cell.probe(ask, (aid, cell.world.versions[aid]), (MISSING_ARTICLE, MISSING_VERSION))

    return run


def _traces(cell: Cell) -> None:
    """Another caller's trace reads as a trace that does not exist; one's own holds only what it may read."""
    mine = json.loads(cell.send("POST", "/api/assistant/chat", json_body={"question": QUESTION})[1]).get("trace_id")
    if mine:
        cell.send("GET", f"/api/traces/{mine}")
    others = [k for k in PRINCIPALS.values() if k and k != cell.key]
    res = cell.client.post("/api/assistant/chat", json={"question": QUESTION}, headers={"Authorization": f"Bearer {others[0]}"})
    cell.probe(lambda t: cell.send("GET", f"/api/traces/{t}"), res.json()["trace_id"], "0" * 32)


def _models(cell: Cell) -> None:
    cell.send("GET", "/v1/models")


def _completions(stream: bool) -> Callable[[Cell], None]:
    def run(cell: Cell) -> None:
        def body(model: str) -> dict[str, Any]:
            return {"model": model, "stream": stream, "messages": [{"role": "user", "content": QUESTION}]}

        cell.send("POST", "/v1/chat/completions", json_body=body("petrichor"))
        unread = sorted(kb for kb in KBS if kb.lower() in cell.world.forbidden(cell.readable))
        if unread:  # a knowledge base the key reads nothing of is a model that does not exist
            cell.probe(lambda m: cell.send("POST", "/v1/chat/completions", json_body=body(m)), f"petrichor/{unread[0]}", "petrichor/no-such-kb")

    return run


def _mcp(cell: Cell) -> None:
    def call(name: str, arguments: dict[str, Any]) -> tuple[int, str]:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        return cell.send("POST", "/mcp", json_body=message, extra={"Accept": "application/json, text/event-stream"})

    call("knowledge_search", {"query": QUESTION, "limit": 20})
    if cell.key is None:
        return  # refused with 401 before the protocol, as every call of this cell
    cell.probe(lambda a: call("knowledge_search", {"query": QUESTION, "article_id": a}), cell.foreign[0], MISSING_ARTICLE)
    for foreign, missing in _locators(cell):
        kind = next(k for k in foreign if k != "kb_id")
        if kind == "article_id":
            cell.probe(lambda a: call("knowledge_outline", {"article_id": a}), foreign[kind], missing[kind])
        cell.probe(lambda v: call("knowledge_read", {**foreign, kind: v}), foreign[kind], missing[kind])

    def ask(a: str) -> tuple[int, str]:
        return call("knowledge_read_many", {"targets": [{"article_id": a}]})

    cell.probe(ask, cell.foreign[0], MISSING_ARTICLE)


def _snapshot_status(cell: Cell) -> None:
    cell.send("GET", "/api/snapshot")


def _snapshots(cell: Cell) -> None:
    cell.send("GET", "/api/snapshots")


ROWS: dict[tuple[str, str], Callable[[Cell], None]] = {
    ("GET", "/api/snapshot"): _snapshot_status,
    ("POST", "/api/knowledge/search"): _search,
    ("POST", "/api/knowledge/outline"): _outline,
    ("POST", "/api/knowledge/read"): lambda cell: (_read(cell), _read_many(cell)),
    ("POST", "/api/assistant/chat"): _chat("/api/assistant/chat", focus=True),
    ("POST", "/api/public/qa/chat"): _chat("/api/public/qa/chat", focus=False),
    ("GET", "/api/articles/{article_id}"): _articles("/api/articles"),
    ("GET", "/api/public/articles/{article_id}"): _articles("/api/public/articles"),
    ("GET", "/api/traces/{trace_id}"): _traces,
    ("GET", "/api/snapshots"): _snapshots,
    ("GET", "/api/citations/resolve"): _citations("/api/citations/resolve"),
    ("GET", "/api/public/citations/resolve"): _citations("/api/public/citations/resolve"),
    ("GET", "/v1/models"): _models,
    ("POST", "/v1/chat/completions"): lambda cell: (_completions(False)(cell), _completions(True)(cell)),
    ("POST", "/mcp"): _mcp,
}
SECURED = {(e.method, e.path): e.secured for e in ENDPOINTS}


def test_every_endpoint_has_a_row_or_a_stated_exclusion() -> None:
    routes = {(e.method, e.path) for e in ENDPOINTS}
    assert not set(ROWS) & set(EXCLUDED)
    assert routes - set(EXCLUDED) == set(ROWS), "a new endpoint needs a row in ROWS (or a reason in EXCLUDED)"


@pytest.fixture(scope="module")
def world(tenant_app) -> World:
    snap = tenant_app.app.state.services.store.current
    by_path = {a.relpath: a for a in ARTICLES}
    ids = {aid: by_path[row["path"]] for aid, row in snap.articles.items()}
    assert len(ids) == len(ARTICLES)
    versions = {aid: row["article_version"] for aid, row in snap.articles.items()}
    return World(chunks=dict(snap.chunks_by_article), nodes=dict(snap.nodes_by_article), pages=dict(snap.pages), versions=versions, ids=ids)


@pytest.mark.parametrize("who", list(PRINCIPALS))
@pytest.mark.parametrize("route", list(ROWS), ids=lambda r: f"{r[0]} {r[1]}")
def test_no_text_of_an_unreadable_article_reaches_the_caller(tenant_app, world, route, who) -> None:
    key = PRINCIPALS[who]
    cell = Cell(tenant_app, world, f"{route} as {who}", key, SECURED[route])
    ROWS[route](cell)
    _assert_nothing_unreadable(cell)


def _assert_nothing_unreadable(cell: Cell) -> None:
    world, key = cell.world, cell.key
    assert cell.bodies
    forbidden = world.forbidden(cell.readable)
    for asked, body in cell.bodies:
        seen = body.lower()
        leaked = sorted(f for f in forbidden if f in seen)
        assert not leaked, (cell.name, asked, leaked, body[:600])
    if key is None and cell.secured:
        assert all(json.loads(b)["error"] for _, b in cell.bodies), "a secured endpoint answers 401 without a key"


def test_the_matrix_sees_what_each_caller_may_read(tenant_app, world) -> None:
    """The rows test something: each caller finds its own markers, on private and public endpoints."""
    for who, key in PRINCIPALS.items():
        cell = Cell(tenant_app, world, who, key, secured=key is not None)
        path = "/api/knowledge/search" if key else "/api/public/qa/chat"
        body = {"query": QUESTION, "limit": 20} if key else {"question": QUESTION}
        status, text = cell.send("POST", path, json_body=body)
        assert status == 200, text
        found = {a for a in cell.readable if a in text}
        assert found, (who, text[:400])


# --- the past rows: a request naming an older snapshot reads it under today's scope ----------------------

PAST_ROUTES = [
    ("POST", "/api/knowledge/search"),
    ("POST", "/api/knowledge/outline"),
    ("POST", "/api/knowledge/read"),
    ("POST", "/api/assistant/chat"),
    ("POST", "/api/public/qa/chat"),
    ("POST", "/v1/chat/completions"),
    ("POST", "/mcp"),
]
"""Every route that reads a snapshot for its answer; the rest read the history store, traces or listings."""


@pytest.fixture(scope="module")
def past_world(past_app, past_build) -> World:
    """The past pair as the test sees it: every article of either build, as it is now where it still exists."""
    services = past_app.app.state.services
    now, then = services.store.current, services.retained.get(past_build.past)
    assert now.version == past_build.now and then.version == past_build.past
    was, is_now = {a.relpath: a for a in PAST}, {a.relpath: a for a in NOW}
    ids = {aid: was[row["path"]] for aid, row in then.articles.items()} | {aid: is_now[row["path"]] for aid, row in now.articles.items()}
    assert len(ids) == len(PAST)
    return World(
        chunks={**then.chunks_by_article, **now.chunks_by_article},
        nodes={**then.nodes_by_article, **now.nodes_by_article},
        pages={**then.pages, **now.pages},
        versions={aid: row["article_version"] for aid, row in then.articles.items()},
        ids=ids,
        deleted=frozenset(then.articles) - frozenset(now.articles),
    )


@pytest.mark.parametrize("who", list(PRINCIPALS))
@pytest.mark.parametrize("route", PAST_ROUTES, ids=lambda r: f"{r[0]} {r[1]}")
def test_an_older_snapshot_gives_back_nothing_taken_away_since(past_app, past_world, past_build, route, who) -> None:
    """Every caller only lost articles between the builds, so what it may read now is all it may read in
    the first build: its rows, each request naming that build, must show nothing else."""
    key = PRINCIPALS[who]
    cell = Cell(past_app, past_world, f"{route} as {who} at the past snapshot", key, SECURED[route], snapshot_version=past_build.past)
    ROWS[route](cell)
    _assert_nothing_unreadable(cell)


def _scope_of(services, who: str):
    from petrichor_serving.auth import public_scope

    key = PRINCIPALS[who]
    return public_scope() if key is None else services.keys.authenticate(f"Bearer {key}").scope()


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_change_is_read_under_todays_scope_in_the_older_snapshot(past_app, past_build, change) -> None:
    """Each edit, on the older snapshot itself: its old rows let the caller read the article, yet search,
    outline and every read locator answer as for an article that does not exist; a caller that keeps
    its articles still reads them there."""
    from datetime import datetime

    from petrichor_serving.agent import tools
    from petrichor_serving.recall.access import readable_articles

    services = past_app.app.state.services
    then = services.retained.get(past_build.past)
    relpath, losers = CHANGES[change]
    article = next(a for a in PAST if a.relpath == relpath)
    aid = next(i for i, row in then.articles.items() if row["path"] == relpath)
    for who in losers:
        scope = _scope_of(services, who)
        mask, _ = readable_articles(scope, datetime.now(UTC), then.recall.articles)
        assert mask[then.recall.articles.row_of[aid]], (change, who, "the old rows alone allowed it")
        assert aid not in then.recall.allowed_article_ids(scope), (change, who)
        found = json.dumps(tools.search(then, scope, QUESTION, embedder=services.embedder, limit=20))
        assert article.marker not in found and aid not in found, (change, who)
        for call in (
            lambda: tools.outline(then, scope, aid),
            lambda: tools.read(then, scope, {"article_id": aid}),
            lambda: tools.read(then, scope, {"chunk_id": then.chunks_by_article[aid][0]}),
            lambda: tools.read(then, scope, {"node_key": then.nodes_by_article[aid][-1]}),
        ):
            with pytest.raises(tools.ToolError) as err:
                call()
            assert err.value.status == 404, (change, who)
    keeps = [w for w in PRINCIPALS if w not in losers and aid in services.store.current.recall.allowed_article_ids(_scope_of(services, w))]
    for who in keeps:
        assert aid in then.recall.allowed_article_ids(_scope_of(services, who)), (change, who)


def test_the_past_rows_see_what_each_caller_still_reads(past_app, past_world, past_build) -> None:
    """The past rows test something: naming the older snapshot, each key finds exactly the articles it may
    read there and today (in memory, in the vector prefilter, over HTTP and MCP); a tenant that gained
    articles since does not find them there either."""
    from datetime import datetime

    from petrichor_serving.recall.access import Scope

    services = past_app.app.state.services
    now, then = services.store.current, services.retained.get(past_build.past)
    for who, key in PRINCIPALS.items():
        scope = _scope_of(services, who)
        readable = past_world.readable(key, secured=key is not None)
        assert then.recall.allowed_article_ids(scope) == readable, who
        prefilter = then.recall.access(scope, datetime.now(UTC)).vector_filter  # LanceDB's, when not in memory
        assert set(re.findall(r"'([0-9a-f]{16})'", prefilter or "")) == readable and prefilter.startswith("article_id IN ("), (who, prefilter)
        if key is None:
            continue
        res = past_app.post(
            "/api/knowledge/search",
            json={"query": QUESTION, "limit": 20, "snapshot_version": past_build.past},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert res.status_code == 200 and res.json()["snapshot_version"] == past_build.past, res.text
        assert {c["article_id"] for c in res.json()["candidates"] if c.get("article_id")} == readable, who
        tool = {"name": "knowledge_search", "arguments": {"query": QUESTION, "limit": 20, "snapshot_version": past_build.past}}
        mcp = past_app.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": tool},
            headers={"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"},
        )
        assert mcp.status_code == 200 and '"isError":false' in mcp.text.replace(" ", "") and all(a in mcp.text for a in readable), (
            who,
            mcp.text[:400],
        )
    gained = Scope(tenant="gamma")
    assert len(now.recall.allowed_article_ids(gained)) == 2 and not then.recall.allowed_article_ids(gained)
    everyone = Scope()
    assert then.recall.allowed_article_ids(everyone) == frozenset(then.articles) - past_world.deleted
