"""A snapshot a killed build staged (manifest written, `CURRENT` never moved) was never published: it is not
listed, not named by `snapshot_version`, not a fallback when `CURRENT` is lost, and the next build collects it."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from petrichor_pipeline.contract.current import CURRENT_FILE
from petrichor_pipeline.contract.manifest import MANIFEST_FILE
from petrichor_serving.app import create_app
from petrichor_serving.services import Services, ServingSettings
from petrichor_serving.snapshot import SnapshotStore
from tests.integrity.test_killed_build import _kill_inside
from tests.pipeline.tiny_corpus import FAST, build, write_corpus

pytestmark = pytest.mark.slow  # builds a corpus, kills a build


def test_a_snapshot_staged_by_a_killed_build_is_never_listed_served_or_kept(tmp_path, monkeypatch):
    data, corpus, home = tmp_path / "data", write_corpus(tmp_path / "corpus"), tmp_path / "home"
    published = build(data, corpus, home)["snapshot_version"]
    (corpus / "kb" / "ports.md").write_text("# Ports\n\nThe service listens on port 9000 now.\n", encoding="utf-8")
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    _kill_inside("snapshot_pointer", data, corpus, home)  # between the staged manifest and the CURRENT move
    snaps = data / "snapshots"
    staged = [p.name for p in snaps.iterdir() if p.is_dir() and p.name != published and (p / MANIFEST_FILE).exists()]
    assert len(staged) == 1 and staged[0] > published

    services = Services(settings=ServingSettings(data_dir=data), store=SnapshotStore(data), keys=None, chat=None, embedder=None)
    with TestClient(create_app(services, watch=False)) as client:
        assert [s["version"] for s in client.get("/api/snapshots").json()["snapshots"]] == [published]
        named = client.post("/api/knowledge/search", json={"query": "port", "snapshot_version": staged[0]})
        assert named.status_code == 404

    (snaps / CURRENT_FILE).unlink()  # CURRENT lost: the newest published snapshot serves, not the newer staged one
    store = SnapshotStore(data)
    assert store.refresh() and store.current.version == published

    after = build(data, corpus, home)
    assert after["_exit_code"] == 0 and after["published"], after
    assert not (snaps / staged[0]).exists()
