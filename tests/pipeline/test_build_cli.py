"""The foundation path: `petrichor build` through Dagster, a snapshot on disk, and a second build that skips."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from petrichor_core.contract.current import read_current
from petrichor_core.contract.schemas import SCHEMAS
from tests.conftest import run_cli_build

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess


def test_first_build_publishes_a_complete_snapshot(built_corpus):
    s = built_corpus.summary
    assert set(s) >= {"snapshot_version", "articles", "partitions", "model_calls", "embedded_texts", "warnings", "errors"}
    assert s["articles"]["total"] >= 14 and s["articles"]["failed"] == 0 and s["errors"] == []
    assert s["articles"]["built"] == s["articles"]["total"]
    assert sorted(s["partitions"]["materialized"] + s["partitions"]["skipped"]) == [f"{i:02x}" for i in range(16)]
    assert len(s["partitions"]["materialized"]) == 16  # empty buckets are materialized too, with zero rows
    assert s["model_calls"] > 0  # embedded_texts may be 0 when the vector cache is warm

    snaps = built_corpus.data_dir / "snapshots"
    version = read_current(snaps)
    assert version == s["snapshot_version"]
    manifest = json.loads((snaps / version / "manifest.json").read_text())
    for name in SCHEMAS:
        assert (snaps / version / f"{name}.parquet").exists(), name
        assert pq.read_table(snaps / version / f"{name}.parquet").num_rows == manifest["tables"][name]["rows"]
    assert manifest["chunk_algorithm_version"] == 2
    assert manifest["vector_tables"]["chunk_vectors"]["rows"] == manifest["tables"]["chunks"]["rows"]
    assert manifest["vector_tables"]["window_vectors"]["rows"] == manifest["tables"]["chunk_windows"]["rows"]
    assert "question_vectors" not in manifest["vector_tables"]  # no default route searches the offline model's questions
    assert manifest["tables"]["questions"]["rows"] == 3 * manifest["tables"]["chunks"]["rows"]


def test_second_build_without_changes_skips_every_partition(built_corpus):
    again = run_cli_build(built_corpus.data_dir, built_corpus.corpus_dir, built_corpus.dagster_home)
    assert again["_exit_code"] == 0
    assert again["partitions"]["materialized"] == []
    assert len(again["partitions"]["skipped"]) == 16
    assert again["articles"]["built"] == 0
    assert again["model_calls"] == 0 and again["embedded_texts"] == 0
    assert again["published"] is False
    assert again["snapshot_version"] == built_corpus.summary["snapshot_version"]


def test_cli_builds_appear_in_dagster_run_history(built_corpus, monkeypatch):
    from dagster import DagsterInstance

    monkeypatch.setenv("DAGSTER_HOME", str(built_corpus.dagster_home))
    with DagsterInstance.get() as instance:
        runs = instance.get_runs()
        first = sorted(runs, key=lambda r: instance.get_run_record_by_id(r.run_id).create_timestamp)[:2]
        bucket_run, publish_run = first  # the first build: one run over all buckets, then one publish run
        assert (bucket_run.tags["dagster/asset_partition_range_start"], bucket_run.tags["dagster/asset_partition_range_end"]) == ("00", "0f")
        assert "dagster/asset_partition_range_start" not in publish_run.tags
        assert all(r.tags.get("petrichor/trigger") == "cli" for r in runs)
        assert instance.get_latest_materialization_event(__import__("dagster").AssetKey("snapshot")) is not None
        from petrichor_pipeline.definitions import PARTITIONED_ASSETS

        for assets_def in PARTITIONED_ASSETS:  # 16 of 16 partitions, the empty buckets' included
            assert len(instance.get_materialized_partitions(assets_def.key)) == 16, assets_def.key
