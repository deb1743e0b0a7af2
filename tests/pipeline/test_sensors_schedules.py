"""The corpus sensor requests only changed buckets; the nightly schedule requests one full rebuild of every bucket,
which `publish_after_build` publishes."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

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


def test_nightly_schedule_is_off_and_requests_one_run_of_every_bucket_without_reuse_that_is_then_published():
    """One switch: the schedule's run covers every bucket (one ranged run, one step process per core), and the
    sensor that publishes it is on by default."""
    from petrichor_pipeline.definitions import defs
    from petrichor_pipeline.sensors import publish_after_build

    assert nightly_full_rebuild.default_status.value == "STOPPED"
    assert publish_after_build.default_status.value == "RUNNING"
    ctx = build_schedule_context(scheduled_execution_time=datetime(2026, 12, 1, 3, tzinfo=UTC), repository_def=defs.get_repository_def())
    (request,) = nightly_full_rebuild.evaluate_tick(ctx).run_requests
    assert request.partition_key is None
    assert (request.tags["dagster/asset_partition_range_start"], request.tags["dagster/asset_partition_range_end"]) == ("00", "0f")
    assert request.run_config["resources"]["petrichor"]["config"]["full_rebuild"] is True
    assert "multiprocess" in request.run_config["execution"]["config"]
    assert defs.resolve_job_def("bucket_build").executor_def.name == "bucket_executor"  # multiprocess, in process or Celery (executors)


def _dagster_stale(instance) -> list[str]:
    """The `articles` buckets Dagster's own staleness resolver (what the UI shows) reports stale."""
    from dagster import AssetKey
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
    from dagster._time import get_current_datetime

    from petrichor_pipeline.definitions import defs

    graph = defs.resolve_asset_graph()
    view = AssetGraphView(
        temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None), instance=instance, asset_graph=graph
    )
    resolver = CachingStaleStatusResolver(instance, graph, view)
    return [b for b in (f"{i:02x}" for i in range(16)) if resolver.get_status(AssetKey("articles"), b) == StaleStatus.STALE]


def test_corpus_observer_marks_exactly_the_edited_bucket_stale_before_any_build(built_corpus, tmp_path, monkeypatch):
    from petrichor_pipeline.sensors import corpus_observer
    from petrichor_pipeline.staleness import observed_versions

    assert corpus_observer.default_status.value == "RUNNING"  # on without anyone starting it; it starts no run
    corpus, data, home = built_corpus.copy_to(tmp_path)
    isolated_env(monkeypatch, data, corpus, home)
    rel = "petrichor-en/guides/access-control.md"
    bucket = bucket_of(article_id_of(rel))
    with DagsterInstance.get() as instance:
        before = observed_versions(instance)
        assert isinstance(corpus_observer(build_sensor_context(instance=instance)), SkipReason)
        (corpus / rel).write_text((corpus / rel).read_text(encoding="utf-8") + "\n\nAn added line.\n", encoding="utf-8")
        assert _dagster_stale(instance) == []
        tick = corpus_observer.evaluate_tick(build_sensor_context(instance=instance))
        assert not tick.run_requests
        for event in tick.asset_events:  # what the sensor daemon does with a tick's asset events
            instance.report_runless_asset_event(event)
        after = observed_versions(instance)
        assert {b for b in after if after[b] != before.get(b)} == {bucket}
        assert _dagster_stale(instance) == [bucket]


def test_with_embedding_off_no_request_or_plan_includes_the_vector_steps(tmp_path, monkeypatch):
    """With embedding off the vector steps are never run, so they must not count as stale either: the sensor
    finds nothing to do after a build, and its and the schedule's requests select the other steps only."""
    from tests.pipeline.tiny_corpus import FAST, build, write_corpus

    corpus, data, home = write_corpus(tmp_path / "corpus"), tmp_path / "data", tmp_path / "home"
    home.mkdir()
    summary = build(data, corpus, home)
    assert summary["published"] and not {"chunk_vectors", "window_vectors", "question_vectors"} & set(summary["stages"])
    isolated_env(monkeypatch, data, corpus, home)
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    with DagsterInstance.get() as instance:
        assert isinstance(corpus_sensor(build_sensor_context(instance=instance)), SkipReason)  # nothing left stale
        (corpus / "kb/ports.md").write_text("# Ports\n\nThe service listens on port 9000.\n", encoding="utf-8")
        result = corpus_sensor(build_sensor_context(instance=instance))
    assert isinstance(result, SensorResult) and len(result.run_requests) == 1
    selected = {k.to_user_string() for k in result.run_requests[0].asset_selection}
    assert "chunks" in selected and not {s for s in selected if s.endswith("_vectors")}

    from petrichor_pipeline.definitions import defs

    ctx = build_schedule_context(scheduled_execution_time=datetime(2026, 12, 1, 3, tzinfo=UTC), repository_def=defs.get_repository_def())
    (request,) = nightly_full_rebuild.evaluate_tick(ctx).run_requests
    assert "chunks" in {k.to_user_string() for k in request.asset_selection}
    assert not {k.to_user_string() for k in request.asset_selection if k.to_user_string().endswith("_vectors")}
