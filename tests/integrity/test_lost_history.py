"""`data/history/` deleted: the next build notices that the published articles have no history records and
publishes again (no bucket rebuilt), so every fresh citation resolves again, and the records of the older
snapshot still retained are written back from that snapshot."""

from __future__ import annotations

import shutil

import pytest
from starlette.testclient import TestClient

from petrichor_serving.app import create_app
from petrichor_serving.services import Services, ServingSettings
from petrichor_serving.snapshot import SnapshotStore
from tests.pipeline.snapshot_io import snapshot_rows
from tests.pipeline.tiny_corpus import build, write_corpus

pytestmark = pytest.mark.slow  # builds a corpus


def test_a_deleted_history_folder_is_rebuilt_by_the_next_build_without_a_full_rebuild(tmp_path):
    data, corpus, home = tmp_path / "data", write_corpus(tmp_path / "corpus"), tmp_path / "home"
    older = build(data, corpus, home)["snapshot_version"]
    (corpus / "kb" / "ports.md").write_text("# Ports\n\nThe service listens on port 9000 now.\n", encoding="utf-8")
    assert build(data, corpus, home)["_exit_code"] == 0
    shutil.rmtree(data / "history")

    after = build(data, corpus, home)
    assert after["_exit_code"] == 0 and after["published"], after
    assert after["partitions"]["materialized"] == [] and after["articles"]["built"] == 0  # a publish, no rebuild

    cited = snapshot_rows(data, "articles") + snapshot_rows(data, "articles", older)
    assert len({r["article_version"] for r in cited}) == 4  # three articles now, one edited since
    services = Services(settings=ServingSettings(data_dir=data), store=SnapshotStore(data), keys=None, chat=None, embedder=None)
    with TestClient(create_app(services, watch=False)) as client:
        for row in cited:
            params = {"article_id": row["article_id"], "article_version": row["article_version"], "start": 0, "end": 6}
            res = client.get("/api/citations/resolve", params=params)
            assert res.status_code == 200 and res.json()["quote"] == row["content"][:6], row["path"]
