"""The Dagster instance does not know the data folder: a bucket is fresh only while this folder's warehouse
holds the files the instance recorded, and a snapshot that is not the corpus scan is never published."""

from __future__ import annotations

import shutil

import pytest

from tests.pipeline.snapshot_io import current_version
from tests.pipeline.tiny_corpus import build, copy_tree, corpus_articles, published_articles

pytestmark = pytest.mark.slow  # builds a small corpus several times


@pytest.fixture()
def copy(tiny_build, tmp_path):
    """(corpus, data, home): a private copy of the tiny corpus' build."""
    return tuple(copy_tree(tiny_build / name, tmp_path / name) for name in ("corpus", "data", "home"))


def test_a_second_data_folder_on_the_same_instance_is_built_in_full(copy, tmp_path):
    corpus, _, home = copy
    other = tmp_path / "other-data"
    summary = build(other, corpus, home)
    assert summary["_exit_code"] == 0 and summary["published"], summary
    assert summary["articles"] == {"total": 3, "built": 3, "skipped": 0, "failed": 0}
    assert published_articles(other) == corpus_articles(other, corpus)
    again = build(other, corpus, home)  # now recorded for this folder: nothing to do
    assert again["partitions"]["materialized"] == [] and not again["published"], again


def test_a_deleted_warehouse_is_rebuilt_and_published_whole(copy):
    corpus, data, home = copy
    shutil.rmtree(data / "warehouse")
    summary = build(data, corpus, home)
    assert summary["_exit_code"] == 0 and summary["published"], summary
    assert summary["partitions"]["materialized"]
    assert published_articles(data) == corpus_articles(data, corpus)


def test_a_warehouse_restored_from_an_older_copy_is_not_taken_for_the_recorded_one(copy, tmp_path):
    corpus, data, home = copy
    backup = copy_tree(data / "warehouse", tmp_path / "backup")
    (corpus / "kb/ports.md").write_text("# Ports\n\nThe service listens on port 9000 now.\n", encoding="utf-8")
    assert build(data, corpus, home)["published"]
    shutil.rmtree(data / "warehouse")
    shutil.copytree(backup, data / "warehouse")  # the older backup: ports.md at its first version
    (corpus / "kb/keys.md").write_text("# Keys\n\nKeys are rotated every 90 days.\n", encoding="utf-8")
    summary = build(data, corpus, home)
    assert summary["_exit_code"] == 0 and summary["published"], summary
    assert published_articles(data) == corpus_articles(data, corpus)  # ports.md at 9000, not the backup's 8000


def test_a_snapshot_that_is_not_the_corpus_scan_is_refused_and_current_kept(copy, monkeypatch):
    """Were staleness wrong in some way not foreseen (here the planner is made to find everything fresh
    after the warehouse was emptied), the publish still refuses a snapshot missing articles."""
    corpus, data, home = copy
    before = current_version(data)
    shutil.rmtree(data / "warehouse")
    (corpus / "kb/ports.md").write_text("# Ports\n\nAn edit that makes CURRENT out of date.\n", encoding="utf-8")
    monkeypatch.setattr("petrichor_pipeline.runner.stale_buckets", lambda *a, **k: [])
    summary = build(data, corpus, home)
    assert summary["_exit_code"] == 1 and not summary["published"], summary
    assert "refusing to publish a snapshot that does not match the corpus" in summary["failed_run"]
    assert "0 of the corpus scan's 3 articles are built" in summary["failed_run"]
    assert any("refusing to publish" in e["reason"] for e in summary["errors"]), summary["errors"]
    assert current_version(data) == before
    assert [p.name for p in (data / "snapshots").iterdir() if p.is_dir()] == [before]
