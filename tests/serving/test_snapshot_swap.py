"""Snapshot watching: complete load, then one reference swap; a broken snapshot is refused."""

from __future__ import annotations

import json
import shutil
import threading

import pytest

from petrichor_pipeline.contract import MANIFEST_FILE, write_text_atomic
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
