"""Snapshot watching: complete load, then one reference swap; a broken snapshot is refused."""

from __future__ import annotations

import json
import shutil
import threading

import pytest

from petrichor_core.contract.files import write_text_atomic
from petrichor_core.contract.manifest import MANIFEST_FILE
from petrichor_serving.agent import tools
from petrichor_serving.recall.access import Scope
from petrichor_serving.snapshot import SnapshotStore

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess


def _clone_snapshot(data, src: str, dst: str) -> None:
    shutil.copytree(data / "snapshots" / src, data / "snapshots" / dst)
    manifest = json.loads((data / "snapshots" / dst / MANIFEST_FILE).read_text())
    manifest["version"], manifest["parent_version"] = dst, src
    (data / "snapshots" / dst / MANIFEST_FILE).write_text(json.dumps(manifest))


def _point(data, version: str) -> None:
    write_text_atomic(data / "snapshots" / "CURRENT", version + "\n")


def test_swap_refuse_and_status(built_corpus, served_snapshot, tmp_path):
    _, embedder = served_snapshot
    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir, data)
    old = (data / "snapshots" / "CURRENT").read_text().strip()
    store = SnapshotStore(data, embed_fingerprint=embedder.fingerprint)
    assert store.refresh() and store.current.version == old
    assert not store.refresh()  # unchanged CURRENT: nothing to do

    new = old[:-6] + "zzzzzz"
    _clone_snapshot(data, old, new)
    _point(data, new)
    assert store.refresh() and store.current.version == new

    broken = new[:-6] + "broken"
    _clone_snapshot(data, new, broken)
    (data / "snapshots" / broken / "chunks.parquet").write_bytes(b"not parquet")
    _point(data, broken)
    assert not store.refresh()
    status = store.status()
    assert status["current"]["version"] == new
    assert status["refused"]["version"] == broken and status["refused"]["error"]
    assert status["pointer"] == broken


def test_requests_in_flight_never_fail_during_swaps(built_corpus, served_snapshot, tmp_path):
    _, embedder = served_snapshot
    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir, data)
    old = (data / "snapshots" / "CURRENT").read_text().strip()
    other = old[:-6] + "yyyyyy"
    _clone_snapshot(data, old, other)
    store = SnapshotStore(data, embed_fingerprint=embedder.fingerprint)
    store.refresh()
    errors: list[BaseException] = []
    seen: set[str] = set()
    stop = threading.Event()

    def client() -> None:
        while not stop.is_set():
            snap = store.current  # a request holds one snapshot for its whole life
            try:
                res = tools.search(snap, Scope(), "snapshot CURRENT", embedder=None, limit=5)
                assert res["snapshot_version"] == snap.version and res["candidates"]
                seen.add(snap.version)
            except BaseException as exc:  # noqa: BLE001 - any failure fails the test
                errors.append(exc)

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(4):
        _point(data, other if i % 2 == 0 else old)
        assert store.refresh()
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    assert seen == {old, other}


BROKEN_POINTERS = {
    "deleted": lambda current: current.unlink(),
    "empty": lambda current: current.write_text("\n"),
    "garbage": lambda current: current.write_text("no-such-snapshot\n"),
    "a-directory": lambda current: (current.unlink(), current.mkdir()),
}


@pytest.mark.parametrize("pointer", list(BROKEN_POINTERS))
def test_a_missing_or_broken_current_falls_back_to_the_newest_intact_snapshot(built_corpus, monkeypatch, tmp_path, pointer):
    """A restart with CURRENT deleted, emptied, garbage or unreadable serves the newest retained snapshot
    that verifies (here: 4 intact and one broken, newer one), and says so without a server path."""
    from dataclasses import replace

    from tests.serving.test_api import _client

    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir, data)
    old = (data / "snapshots" / "CURRENT").read_text().strip()
    intact = [old[:-6] + suffix for suffix in ("aaaaa1", "aaaaa2", "aaaaa3")]
    for version in intact:
        _clone_snapshot(data, old, version)
    broken = old[:-6] + "zzzzzz"  # the newest by name: refused, so the fallback goes on to the next
    _clone_snapshot(data, old, broken)
    (data / "snapshots" / broken / "chunks.parquet").write_bytes(b"not parquet")
    BROKEN_POINTERS[pointer](data / "snapshots" / "CURRENT")

    with _client(replace(built_corpus, data_dir=data), monkeypatch) as client:
        newest = max(intact + [old])
        health = client.get("/healthz")
        assert health.status_code == 503 and health.json()["snapshot_version"] == newest
        assert str(tmp_path) not in health.text and "/snapshots/" not in health.text
        status = client.get("/api/snapshot").json()
        assert status["status"] == "degraded" and status["current"]["version"] == newest
        assert status["refused"]["version"] == ("no-such-snapshot" if pointer == "garbage" else None)
        hit = client.post("/api/knowledge/search", json={"query": "API keys", "limit": 3})
        assert hit.status_code == 200 and hit.json()["snapshot_version"] == newest
        chunk_id = next(c["chunk_id"] for c in hit.json()["candidates"] if c.get("chunk_id"))
        assert client.post("/api/knowledge/read", json={"chunk_id": chunk_id}).status_code == 200
        assert client.post("/api/knowledge/outline", json={"article_id": hit.json()["candidates"][0]["article_id"]}).status_code == 200
        chat = client.post("/api/assistant/chat", json={"question": "How are API keys stored?"})
        assert chat.status_code == 200 and chat.json()["snapshot_version"] == newest

        # a build that publishes again (CURRENT back, naming an intact snapshot) heals the service
        current = data / "snapshots" / "CURRENT"
        if current.is_dir():
            current.rmdir()
        _point(data, old)
        store = client.app.state.services.store
        store.refresh()  # the service's own watcher may have swapped first: either way `old` serves now
        assert store.current.version == old
        assert client.get("/healthz").status_code == 200


def test_a_never_published_data_folder_is_not_a_missing_current(tmp_path):
    store = SnapshotStore(tmp_path)
    assert not store.refresh()
    health = store.health()
    assert not health.ok and "petrichor build" in health.reason and store.status()["refused"] is None
