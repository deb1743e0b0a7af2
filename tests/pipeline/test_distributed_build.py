"""A build on Dagster's multiprocess executor with 4 workers (`PETRICHOR_BUILD_WORKERS`) publishes the same
snapshot tables, row for row, as the in-process build, and its run keeps one model step at a time."""

from __future__ import annotations

import pyarrow as pa
import pytest
from dagster import DagsterInstance

from petrichor_pipeline.assets._metadata import MODEL_STEP
from petrichor_pipeline.contract import SCHEMAS, UNIQUE, read_current, read_manifest, read_table
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.runner import run_build
from tests.conftest import isolated_env

pytestmark = pytest.mark.slow


def _tables(data_dir) -> dict[str, list[dict]]:
    snaps = data_dir / "snapshots"
    manifest = read_manifest(snaps, read_current(snaps))
    out = {}
    for name in SCHEMAS:
        table: pa.Table = read_table(snaps, manifest, name)
        key = [UNIQUE[name]] if name in UNIQUE else table.column_names
        out[name] = sorted(table.to_pylist(), key=lambda r: tuple(str(r[k]) for k in key))
    return out


def test_a_four_worker_multiprocess_build_equals_the_in_process_build(built_corpus, tmp_path, monkeypatch):
    data, home = tmp_path / "data", tmp_path / "dagster_home"
    home.mkdir()
    # the production setting of docs/scaling.md: one model step at a time across runs, through the pool
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\nconcurrency:\n  pools:\n    default_limit: 1\n", encoding="utf-8")
    isolated_env(monkeypatch, data, built_corpus.corpus_dir, home)
    monkeypatch.setenv("PETRICHOR_BUILD_WORKERS", "4")
    with DagsterInstance.from_config(str(home)) as instance:
        build = run_build(build_context(str(data), str(built_corpus.corpus_dir)), instance=instance, parallel=True)
        assert build.ok and build.published, build.to_json()
        run = instance.get_run_by_id(build.runs[0].run_id)
        assert run.job_name == "bucket_build"
        executor = run.run_config["execution"]["config"]["multiprocess"]
        key, value = next(iter(MODEL_STEP.items()))
        assert executor["max_concurrent"] == 4
        assert executor["tag_concurrency_limits"] == [{"key": key, "value": value, "limit": 1}]

    parallel, in_process = _tables(data), _tables(built_corpus.data_dir)
    for name in SCHEMAS:
        assert len(parallel[name]) == len(in_process[name]), name
        assert parallel[name] == in_process[name], name


def test_every_model_step_is_in_the_model_pool():
    from petrichor_pipeline.assets._metadata import MODEL_POOL
    from petrichor_pipeline.jobs import all_assets

    model_steps = [a for a in all_assets() if getattr(a, "op", None) is not None and a.op.tags.get("petrichor/model")]
    assert {a.key.to_user_string() for a in model_steps} >= {"questions", "wiki_candidates", "chunk_vectors"}
    assert {a.op.pool for a in model_steps} == {MODEL_POOL}
