"""Without `DAGSTER_HOME` a build uses the Dagster instance of its own data folder: the repository's
`./dagster_home` for its default `./data`, `<data>/dagster_home` for any other, so two corpora built from the
same folder never share partition state."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from petrichor.cli import _dagster_home, main
from petrichor_core.config import load_settings
from tests.conftest import EMBED_CACHE
from tests.pipeline.tiny_corpus import FAST, write_corpus

pytestmark = pytest.mark.slow  # builds two corpora


def _build(monkeypatch: pytest.MonkeyPatch, data: str, corpus: Path) -> dict:
    """`petrichor build --json` from the current folder with no `DAGSTER_HOME` set."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    for name, value in {**FAST, "PETRICHOR_DATA": data, "PETRICHOR_CORPUS": str(corpus), "PETRICHOR_EMBED_CACHE": str(EMBED_CACHE)}.items():
        monkeypatch.setenv(name, value)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["build", "--json"]) == 0
    return json.loads(buf.getvalue())


def test_two_data_folders_built_in_turn_from_one_folder_do_not_rebuild_each_other(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "dagster_home").mkdir(parents=True)
    (repo / "dagster_home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    monkeypatch.chdir(repo)
    first = write_corpus(tmp_path / "first")
    second = write_corpus(tmp_path / "second", {"kb/other.md": "# Other\n\nA second knowledge base.\n"})

    assert _build(monkeypatch, "kb-one", first)["partitions"]["materialized"]
    assert _build(monkeypatch, "kb-two", second)["partitions"]["materialized"]
    again = _build(monkeypatch, "kb-one", first)
    assert again["partitions"]["materialized"] == [] and again["articles"]["built"] == 0

    assert (repo / "kb-one" / "dagster_home" / "dagster.yaml").exists() and (repo / "kb-two" / "dagster_home").exists()
    assert [p.name for p in (repo / "dagster_home").iterdir()] == ["dagster.yaml"]  # not the other folders' instance
    monkeypatch.setenv("PETRICHOR_DATA", "data")
    monkeypatch.delenv("DAGSTER_HOME")
    _dagster_home(load_settings())
    assert os.environ["DAGSTER_HOME"] == str((repo / "dagster_home").resolve())  # the README's `dagster dev` instance
