"""The corpus sensor requests only changed buckets; the nightly schedule requests a full rebuild of all."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
import pytest

from dagster import DagsterInstance, RunRequest, SensorResult, SkipReason, build_schedule_context, build_sensor_context

from petrichor_pipeline.jobs import nightly_full_rebuild
from petrichor_pipeline.sensors import corpus_sensor
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from tests.conftest import isolated_env

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess


def test_corpus_sensor_requests_only_changed_buckets(built_corpus, tmp_path, monkeypatch):
    corpus, data, home = tmp_path / "corpus", tmp_path / "data", tmp_path / "home"
    shutil.copytree(built_corpus.corpus_dir, corpus)
    shutil.copytree(built_corpus.data_dir / "warehouse", data / "warehouse", ignore=shutil.ignore_patterns("embedding_cache"))
    shutil.copytree(built_corpus.dagster_home, home)  # what was built from what lives on the instance
    isolated_env(monkeypatch, data, corpus, home)
    with DagsterInstance.get() as instance:
        assert isinstance(corpus_sensor(build_sensor_context(instance=instance)), SkipReason)
        rel = "petrichor-zh/overview.md"
        (corpus / rel).write_text((corpus / rel).read_text(encoding="utf-8") + "\n\n新增的一段说明。\n", encoding="utf-8")
        result = corpus_sensor(build_sensor_context(instance=instance))
    bucket = bucket_of(article_id_of(rel))
    assert isinstance(result, SensorResult)
    assert [r.partition_key for r in result.run_requests] == [bucket]
    assert all(isinstance(r, RunRequest) and r.run_key for r in result.run_requests)
    assert [(e.asset_key.to_user_string(), e.partition) for e in result.asset_events] == [("corpus", bucket)]


def test_nightly_schedule_is_off_and_requests_every_bucket_without_reuse():
    assert nightly_full_rebuild.default_status.value == "STOPPED"
    from petrichor_pipeline.definitions import defs

    ctx = build_schedule_context(
        scheduled_execution_time=datetime(2026, 12, 1, 3, tzinfo=timezone.utc), repository_def=defs.get_repository_def()
    )
    requests = list(nightly_full_rebuild.evaluate_tick(ctx).run_requests)
    assert sorted(r.partition_key for r in requests) == [f"{i:02x}" for i in range(16)]
    assert all(r.run_config["resources"]["petrichor"]["config"]["full_rebuild"] is True for r in requests)
