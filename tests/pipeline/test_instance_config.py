"""The Dagster instance a data folder gets: one text, written where none is, read by Dagster as a run queue
the daemon looks at every second."""

from __future__ import annotations

from pathlib import Path

from dagster import DagsterInstance
from dagster._core.run_coordinator import QueuedRunCoordinator

from petrichor_pipeline.instance import INSTANCE_YAML, write_instance_yaml
from petrichor_pipeline.sensors import PUBLISH_SENSOR_INTERVAL_S, publish_after_build

REPO = Path(__file__).resolve().parents[2]


def test_the_repositorys_instance_is_the_written_one():
    assert (REPO / "dagster_home" / "dagster.yaml").read_text(encoding="utf-8") == INSTANCE_YAML


def test_dagster_reads_it_as_a_queue_dequeued_every_second(tmp_path):
    write_instance_yaml(tmp_path)
    with DagsterInstance.from_config(str(tmp_path)) as instance:
        coordinator = instance.run_coordinator
        assert isinstance(coordinator, QueuedRunCoordinator)
        assert coordinator.dequeue_interval_seconds == 1
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == 4


def test_an_operators_own_configuration_is_kept(tmp_path):
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    write_instance_yaml(tmp_path)
    assert (tmp_path / "dagster.yaml").read_text(encoding="utf-8") == "telemetry:\n  enabled: false\n"


def test_the_publish_sensor_ticks_as_often_as_the_daemon_evaluates_sensors():
    from dagster._daemon.sensor import MIN_INTERVAL_LOOP_TIME

    assert publish_after_build.minimum_interval_seconds == PUBLISH_SENSOR_INTERVAL_S <= MIN_INTERVAL_LOOP_TIME


def test_the_queue_starts_one_publishing_run_at_a_time_and_every_publishing_job_is_tagged(tmp_path):
    from petrichor_pipeline.definitions import defs
    from petrichor_pipeline.jobs import PUBLISH_TAG

    write_instance_yaml(tmp_path)
    with DagsterInstance.from_config(str(tmp_path)) as instance:
        limits = instance.get_concurrency_config().run_queue_config.tag_concurrency_limits
    assert {"key": PUBLISH_TAG[0], "limit": 1} in limits
    publishing = [
        j
        for j in defs.jobs
        if any(k.to_user_string() == "published_snapshot" for k in defs.resolve_job_def(j.name).asset_layer.executable_asset_keys)
    ]
    assert sorted(j.name for j in publishing) == ["build_and_publish", "publish"]
    assert all(defs.resolve_job_def(j.name).tags.get(PUBLISH_TAG[0]) == PUBLISH_TAG[1] for j in publishing)


def test_the_build_runs_on_the_data_folders_instance_without_per_step_log_capture(tmp_path, monkeypatch):
    """`petrichor build` starts no `tail` per step: its runs' instance is the folder's own, compute logs off."""
    from dagster._core.storage.noop_compute_log_manager import NoOpComputeLogManager

    from petrichor_pipeline.instance import build_instance

    write_instance_yaml(tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    with build_instance() as instance:
        assert isinstance(instance.compute_log_manager, NoOpComputeLogManager)
        assert isinstance(instance.run_coordinator, QueuedRunCoordinator)  # the rest is the folder's
        assert instance.root_directory == str(tmp_path)
    with DagsterInstance.from_config(str(tmp_path)) as ui:  # what the UI and the daemon read keeps capturing
        assert not isinstance(ui.compute_log_manager, NoOpComputeLogManager)
