"""A full disk during a build: a clear error in the `--json` summary (still printed), no partial snapshot
folder, `CURRENT` untouched. The failure is injected where the build writes (ENOSPC)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from tests.pipeline.snapshot_io import current_version
from tests.pipeline.tiny_corpus import build, copy_tree

pytestmark = pytest.mark.slow  # builds a small corpus


@pytest.fixture()
def edited(tiny_build, tmp_path):
    """(corpus, data, home) copied from the tiny corpus' build, with one article edited so the next build publishes."""
    corpus, data, home = (copy_tree(tiny_build / name, tmp_path / name) for name in ("corpus", "data", "home"))
    (corpus / "kb/ports.md").write_text("# Ports\n\nThe service listens on port 9000 now.\n", encoding="utf-8")
    return corpus, data, home


def _disk_full_after(monkeypatch, target: str, writes: int) -> None:
    """`target` (a module's write function) succeeds `writes` times, then fails as a full disk does."""
    module, name = target.rsplit(".", 1)
    real = getattr(__import__(module, fromlist=[name]), name)
    calls = {"n": 0}

    def write(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > writes:
            raise OSError(errno.ENOSPC, "No space left on device", str(next(a for a in args if isinstance(a, Path))))
        return real(*args, **kwargs)

    monkeypatch.setattr(target, write)


def _assert_refused_cleanly(summary: dict, data, before: str) -> None:
    assert summary["_exit_code"] == 1 and not summary["published"], summary
    assert "No space left on device" in summary["failed_run"], summary["failed_run"]
    assert any(e["reason"].startswith("the disk is full") for e in summary["errors"]), summary["errors"]
    assert current_version(data) == before and summary["snapshot_version"] == before
    assert sorted(p.name for p in (data / "snapshots").iterdir() if p.is_dir()) == [before]  # no partial folder


def test_a_full_disk_while_writing_the_snapshot(edited, monkeypatch):
    corpus, data, home = edited
    before = current_version(data)
    _disk_full_after(monkeypatch, "petrichor_pipeline.builder.publish.write_parquet_atomic", 2)
    _assert_refused_cleanly(build(data, corpus, home), data, before)


def test_a_full_disk_while_writing_the_warehouse(edited, monkeypatch):
    corpus, data, home = edited
    before = current_version(data)
    _disk_full_after(monkeypatch, "petrichor_pipeline.builder.warehouse.write_atomic", 0)
    summary = build(data, corpus, home)
    _assert_refused_cleanly(summary, data, before)
    assert summary["failed_run"].startswith("buckets ")


def test_a_full_disk_under_the_dagster_instance(edited, monkeypatch):
    """The instance's SQLite database cannot grow: the error SQLAlchemy raises becomes the summary's."""
    import sqlite3

    from dagster import DagsterInstance
    from sqlalchemy.exc import OperationalError

    corpus, data, home = edited
    before = current_version(data)

    def full(self, *args, **kwargs):
        raise OperationalError("INSERT INTO event_logs", {}, sqlite3.OperationalError("database or disk is full"))

    monkeypatch.setattr(DagsterInstance, "report_runless_asset_event", full)
    summary = build(data, corpus, home)
    assert summary["_exit_code"] == 1 and not summary["published"], summary
    assert "database or disk is full" in summary["failed_run"]
    assert any(e["reason"].startswith("the disk is full") for e in summary["errors"]), summary["errors"]
    assert current_version(data) == before
