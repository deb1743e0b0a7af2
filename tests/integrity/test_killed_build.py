"""A build SIGKILLed inside each stage leaves the previous snapshot serving identical answers; the next
build publishes a complete snapshot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import EMBED_CACHE, REPO, run_cli_build
from tests.integrity.helpers import assert_complete, copy_built, current, edit_article, served_answers
from tests.pipeline.snapshot_io import snapshot_rows

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess

STAGES = [
    "articles",
    "chunks",
    "questions",
    "wiki_candidates",
    "page_index",
    "chunk_vectors",
    "question_vectors",
    "wiki_pages",
    "snapshot_files",
    "snapshot_pointer",
]


def _kill_inside(stage: str, data, corpus, home) -> None:
    env = {
        **os.environ,
        "PETRICHOR_DATA": str(data),
        "PETRICHOR_CORPUS": str(corpus),
        "DAGSTER_HOME": str(home),
        "PETRICHOR_EMBED_CACHE": str(EMBED_CACHE),
    }
    for name in ("PETRICHOR_LLM_BASE_URL", "PETRICHOR_EMBED_BASE_URL", "PETRICHOR_API_KEYS"):
        env.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.integrity.stage_hook", stage],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline, seen = time.time() + 240, []
        for line in proc.stderr:
            seen.append(line.strip())
            if f"HOLD {stage}" in line or time.time() > deadline:
                break
        assert any(f"HOLD {stage}" in s for s in seen), seen[-20:]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_a_build_killed_inside_each_stage(built_corpus, served_snapshot, tmp_path):
    _, embedder = served_snapshot
    data, corpus, home = copy_built(built_corpus, tmp_path)
    old = current(data)
    _, healthy = served_answers(data, embedder)
    note = "A sentence only the rebuilt snapshot holds, for the kill test."
    edit_article(corpus, note=note)
    for stage in STAGES:
        _kill_inside(stage, data, corpus, home)
        assert current(data) == old, stage
        assert served_answers(data, embedder) == (old, healthy), stage

    resumed = run_cli_build(data, corpus, home)
    assert resumed["_exit_code"] == 0 and resumed["published"], resumed
    assert_complete(data)
    assert any(note in a["content"] for a in snapshot_rows(data, "articles"))
