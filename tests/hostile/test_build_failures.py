"""A build that cannot write says where and why, in English and in `--json`, and writes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from petrichor_pipeline.builder.issues import FileError
from petrichor_pipeline.builder.preflight import write_problems
from tests.conftest import run_cli_build
from tests.sources.helpers import write


def _corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    write(corpus, "kb/a.md", "# A\n\nalpha\n")
    return corpus


def test_a_data_folder_that_is_a_file_is_a_json_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_text("not a folder")
    doc = run_cli_build(data, _corpus(tmp_path), tmp_path / "home")
    assert doc["_exit_code"] == 1 and not doc["published"]
    (error,) = doc["errors"]
    assert error["path"] == str(data) and "is a file, not a folder" in error["reason"]
    assert doc["failed_run"].startswith(f"cannot write to {data}")
    assert {"snapshot_version", "articles", "partitions", "model_calls", "warnings", "errors"} <= set(doc)


def test_an_unwritable_snapshots_folder_is_named_before_anything_is_built(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "snapshots").write_text("blocked")
    doc = run_cli_build(data, _corpus(tmp_path), tmp_path / "home")
    assert doc["_exit_code"] == 1
    assert [e["path"] for e in doc["errors"]] == [str(data / "snapshots")]
    assert not (data / "warehouse" / "articles").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders; run as a normal user to check permissions")
def test_a_read_only_folder_names_the_permission(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        (problem,) = write_problems([folder, folder / "snapshots"])
        assert problem == FileError(str(folder), "cannot write to this folder: Permission denied")
    finally:
        folder.chmod(0o700)


@pytest.mark.slow  # builds a one-article corpus
def test_the_human_summary_states_failed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    from petrichor.cli import main
    from tests.conftest import isolated_env

    corpus = _corpus(tmp_path)
    write(corpus, "kb/bad.md", b"\xff\xfe")
    isolated_env(monkeypatch, tmp_path / "data", corpus, tmp_path / "home")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    assert main(["build"]) == 0
    last = [line for line in capsys.readouterr().out.splitlines() if line.startswith("snapshot:")][-1]
    assert "1 file(s) failed" in last
