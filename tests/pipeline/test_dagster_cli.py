"""`dagster asset materialize` (from the module) on an embedded instance; `dagster dev` from workspace.yaml is
checked in a browser (`tests/browser/test_dagster_ui.py`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
    assert (tmp_path / "data" / "warehouse" / "chunks" / "bucket=03.arrow").exists()
