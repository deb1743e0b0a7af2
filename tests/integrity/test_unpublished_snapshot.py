"""A snapshot a killed build staged (manifest written, `CURRENT` never moved) was never published: it is not
listed, not named by `snapshot_version`, not a fallback when `CURRENT` is lost, and the next build collects it."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from petrichor_core.contract.current import CURRENT_FILE, collect_garbage, mark_staged, publish, published_snapshots
from petrichor_core.contract.manifest import MANIFEST_FILE, Manifest, write_manifest
from petrichor_core.versions import SCHEMA_VERSION
from petrichor_serving.app import create_app
from petrichor_serving.services import Services, ServingSettings
from petrichor_serving.snapshot import SnapshotStore
from tests.integrity.test_killed_build import _kill_inside
from tests.pipeline.tiny_corpus import FAST, build, write_corpus


def _manifest(version: str) -> Manifest:
    return Manifest(version, "2026-11-30T00:00:00+00:00", None, SCHEMA_VERSION, 2, 4, "offline", None)


def test_a_staged_folder_is_collected_once_a_newer_snapshot_is_published_and_one_in_flight_is_kept(tmp_path):
    publish(tmp_path, _manifest("v1"))
    for version in ("v2", "v4"):  # staged as a build stages: the record, then the manifest
        mark_staged(tmp_path, version)
        write_manifest(tmp_path, _manifest(version))
    publish(tmp_path, _manifest("v3"))
    assert published_snapshots(tmp_path) == ["v1", "v3"]
    assert collect_garbage(tmp_path, keep=5) == ["v2"]
    assert (tmp_path / "v4").exists()  # newer than every published snapshot: a build may still be checking it


@pytest.mark.slow  # builds a corpus, kills a build
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
