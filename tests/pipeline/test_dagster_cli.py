"""`dagster asset materialize` (from the module) and `dagster dev` (from workspace.yaml) on an embedded instance."""

from __future__ import annotations

import json
import os
import pytest
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.conftest import CORPUS, EMBED_CACHE, REPO

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess

DAGSTER = str(Path(sys.executable).parent / "dagster")


def _env(tmp_path) -> dict:
    home = tmp_path / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text((REPO / "dagster_home" / "dagster.yaml").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETRICHOR_")}
    env.update(DAGSTER_HOME=str(home), PETRICHOR_DATA=str(tmp_path / "data"), PETRICHOR_CORPUS=str(CORPUS), PETRICHOR_EMBED_CACHE=str(EMBED_CACHE))
    return env


def test_dagster_asset_materialize_from_the_workspace(tmp_path):
    out = subprocess.run(
        [DAGSTER, "asset", "materialize", "-m", "petrichor_pipeline.definitions", "--select", "articles,chunks", "--partition", "03"],
        cwd=REPO,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "data" / "warehouse" / "chunks" / "bucket=03.parquet").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dagster_dev_serves_the_asset_graph(tmp_path):
    port = _free_port()
    proc = subprocess.Popen(
        [DAGSTER, "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO,
        env=_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # dagster dev leaves children behind: kill the whole group
    )
    try:
        query = json.dumps({"query": "{ assetNodes { assetKey { path } groupName } }"}).encode()
        deadline, keys = time.time() + 180, None
        while time.time() < deadline and keys is None:
            time.sleep(1)
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=query, headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=5) as res:
                    nodes = json.loads(res.read())["data"]["assetNodes"]
                    keys = {n["assetKey"]["path"][-1] for n in nodes} if nodes else None
            except (OSError, KeyError, TypeError, ValueError):
                continue
        assert keys is not None, "dagster dev did not answer"
        assert {"articles", "chunks", "questions", "chunk_vectors", "question_vectors", "wiki_pages", "page_index", "snapshot"} <= keys
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
