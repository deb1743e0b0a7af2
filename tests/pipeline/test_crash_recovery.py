"""A build killed mid-way leaves the previous snapshot serving; the next build equals a clean build."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from petrichor_serving.snapshot import load_snapshot
from tests.conftest import EMBED_CACHE, REPO, run_cli_build
from tests.pipeline.snapshot_io import KEYS, current_version, snapshot_rows

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess

EDITS = [
    "petrichor-en/overview.md",
    "petrichor-zh/operations/snapshots.md",
    "petrichor-en/reference/http-api.md",
    "petrichor-zh/concepts/chunking.md",
]


def _edit(corpus):
    for rel in EDITS:
        p = corpus / rel
        p.write_text(p.read_text(encoding="utf-8") + f"\n\n## Addendum\n\nA note added to {rel} for the crash test.\n", encoding="utf-8")


def _buckets_written(data, since: float) -> int:
    """Buckets whose chunks the running build has written already."""
    return sum(p.stat().st_mtime > since for p in (data / "warehouse" / "chunks").glob("bucket=*.arrow"))


def _stale_on(home, data, corpus) -> list[str]:
    """The buckets the instance at `home` reports stale for `corpus`."""
    from dagster import DagsterInstance

    from petrichor_pipeline.builder.steps.articles import current_bucket_versions
    from petrichor_pipeline.definitions import PARTITIONED_ASSETS
    from petrichor_pipeline.resources import build_context
    from petrichor_pipeline.staleness import stale_buckets

    ctx = build_context(str(data), str(corpus))
    with DagsterInstance.from_config(str(home)) as instance:
        return stale_buckets(instance, PARTITIONED_ASSETS, current_bucket_versions(ctx), ctx.build_key())


def test_killed_build_keeps_old_snapshot_and_next_build_matches_clean_build(built_corpus, tmp_path):
    corpus, data, home = tmp_path / "corpus", tmp_path / "data", tmp_path / "home"
    shutil.copytree(built_corpus.corpus_dir, corpus)
    shutil.copytree(built_corpus.data_dir, data)
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    old = current_version(data)
    _edit(corpus)
    # a fresh instance has recorded no materialization: every bucket must be rebuilt
    assert _stale_on(home, data, corpus) == [f"{i:02x}" for i in range(16)]
    started = time.time()

    env = {
        **os.environ,
        "PETRICHOR_DATA": str(data),
        "PETRICHOR_CORPUS": str(corpus),
        "DAGSTER_HOME": str(home),
        "PETRICHOR_EMBED_CACHE": str(EMBED_CACHE),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "petrichor.cli", "build"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 240
        while _buckets_written(data, started) < 2 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the build finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)

    # the previous snapshot is still the one CURRENT names, and it still loads
    assert current_version(data) == old
    assert load_snapshot(data, old, embed_fingerprint=None).version == old

    resumed = run_cli_build(data, corpus, home)
    assert resumed["_exit_code"] == 0 and resumed["published"]

    clean_dir = tmp_path / "clean"
    clean = run_cli_build(clean_dir, corpus, tmp_path / "clean-home")
    assert clean["_exit_code"] == 0
    for table in KEYS:
        assert snapshot_rows(data, table) == snapshot_rows(clean_dir, table), table
