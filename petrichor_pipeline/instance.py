"""The Dagster instance configuration every data folder's instance is written with (`dagster.yaml`).

With no storage section Dagster keeps runs, events and schedules in SQLite files under `$DAGSTER_HOME`, which is
what a single machine wants; `deploy/` and `docs/scaling.md` hold the Postgres and distributed forms.

Runs launched from the UI, a sensor or a schedule wait in the run queue until the daemon dequeues them. Dagster
looks every 5 s by default, and a partition materialized from the UI publishes through two queued runs (the
bucket run, then the publish run `publish_after_build` requests), so the queue alone added up to 10 s to a
change the CLI publishes in 15–20 s. The queue is looked at every second instead (`dequeue_interval_seconds`),
a database read per second on an idle instance. Runs that publish (`jobs.PUBLISH_TAG`) start one at a time."""

from __future__ import annotations

from pathlib import Path

INSTANCE_YAML = """\
# The Dagster instance of a Petrichor data folder (petrichor_pipeline/instance.py writes this text).
# With no storage section Dagster keeps runs, events and schedules in SQLite files under $DAGSTER_HOME.
# To scale out, replace it with a `storage: postgres:` block and a run launcher (docs/scaling.md).
telemetry:
  enabled: false
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 4
    dequeue_interval_seconds: 1
    tag_concurrency_limits:  # one run that moves CURRENT at a time (petrichor_pipeline/jobs.py: PUBLISH_TAG)
      - key: petrichor/publish
        limit: 1
"""


def write_instance_yaml(home: Path) -> None:
    """Write `dagster.yaml` into `home` unless one is there: an operator's own configuration is kept."""
    target = home / "dagster.yaml"
    if not target.exists():
        target.write_text(INSTANCE_YAML, encoding="utf-8")
