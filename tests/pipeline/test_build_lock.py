"""One build per data folder: a second build exits with a clear message (or waits `--wait` seconds), a
killed holder frees the lock, and concurrent builds of different corpora each publish exactly one corpus."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from petrichor_pipeline.builder.lock import LOCK_FILE, BuildLocked, build_lock
from tests.conftest import EMBED_CACHE, REPO
from tests.pipeline.snapshot_io import snapshot_rows
from tests.pipeline.tiny_corpus import build, write_corpus

PETRICHOR = str(Path(sys.executable).parent / "petrichor")


def test_a_held_lock_refuses_a_second_holder_after_the_wait(tmp_path):
    with build_lock(tmp_path) as me:
        started = time.monotonic()
        with pytest.raises(BuildLocked) as refused:
            with build_lock(tmp_path, wait_s=0.5):
                pass
        assert time.monotonic() - started >= 0.5
    assert f"pid {me.pid}" in str(refused.value) and str(tmp_path / LOCK_FILE) in str(refused.value)
    with build_lock(tmp_path):  # released on exit
        pass


def test_a_killed_holder_releases_the_lock(tmp_path):
    code = f"from pathlib import Path; from petrichor_pipeline.builder.lock import build_lock\nwith build_lock(Path({str(tmp_path)!r})):\n print('held', flush=True)\n import time; time.sleep(120)"
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(BuildLocked):
            with build_lock(tmp_path):
                pass
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        with build_lock(tmp_path, wait_s=10):  # the kernel dropped the dead holder's lock: no stale lock
            pass
    finally:
        if holder.poll() is None:
            holder.kill()


@pytest.mark.slow
def test_a_build_on_a_locked_folder_exits_with_a_message_and_writes_nothing(tmp_path):
    corpus, data = write_corpus(tmp_path / "corpus"), tmp_path / "data"
    with build_lock(data):
        summary = build(data, corpus, tmp_path / "home")
    assert summary["_exit_code"] == 1 and not summary["published"], summary
    assert "another build is running on this data folder" in summary["failed_run"]
    assert "--wait" in summary["failed_run"]
    assert summary["errors"] and not (data / "snapshots" / "CURRENT").exists()


CORPORA = {
    "a": {"kb/alpha.md": "# Alpha\n\nAlpha listens on port 8001.\n", "kb/shared.md": "# Shared\n\nCorpus A's shared page.\n"},
    "b": {
        "kb/beta.md": "# Beta\n\nBeta keeps four snapshots.\n",
        "kb/gamma.md": "# Gamma\n\nGamma rotates keys.\n",
        "kb/delta.md": "# Delta\n\nDelta.\n",
    },
    "c": {"kb/shared.md": "# Shared\n\nCorpus C's own shared page.\n", "kb/epsilon.md": "# Epsilon\n\nEpsilon answers health checks.\n"},
}


@pytest.mark.slow
def test_three_concurrent_builds_publish_exactly_one_corpus(tmp_path):
    """Three builds of three corpora started at once on one data folder: one takes the lock and publishes
    its own corpus, the others exit at once with the lock's message and write nothing (`--wait` would queue
    them instead; the lock's own test covers the wait)."""
    data, home = tmp_path / "data", tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    procs = []
    for name, articles in CORPORA.items():
        corpus = write_corpus(tmp_path / f"corpus-{name}", articles)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PETRICHOR_", "DAGSTER_"))}
        env.update(
            PETRICHOR_DATA=str(data),
            PETRICHOR_CORPUS=str(corpus),
            DAGSTER_HOME=str(home),
            PETRICHOR_EMBED="off",
            PETRICHOR_EMBED_CACHE=str(EMBED_CACHE),
        )
        procs.append(subprocess.Popen([PETRICHOR, "build", "--json"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    summaries = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        summaries.append(json.loads(out))  # the JSON summary is printed whatever the outcome
        summaries[-1]["_exit_code"] = proc.returncode
    published = [s for s in summaries if s["published"]]
    refused = [s for s in summaries if not s["published"]]
    assert len(published) >= 1 and all(s["_exit_code"] == 0 for s in published), summaries
    assert all(s["_exit_code"] == 1 and "another build is running on this data folder" in s["failed_run"] for s in refused), refused
    snapshots = sorted(p.name for p in (data / "snapshots").iterdir() if p.is_dir())
    assert sorted(s["snapshot_version"] for s in published) == snapshots  # nothing else reached the folder
    for version in snapshots:
        rows = snapshot_rows(data, "articles", version)
        matches = [name for name, articles in CORPORA.items() if {r["path"] for r in rows} == set(articles)]
        assert len(matches) == 1, (version, rows)
        own = CORPORA[matches[0]]
        assert all(own[r["path"]].split("\n\n", 1)[1].strip() in r["content"] for r in rows), rows
