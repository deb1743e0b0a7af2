"""The Dagster instance configuration every data folder's instance is written with (`dagster.yaml`).

With no storage section Dagster keeps runs, events and schedules in SQLite files under `$DAGSTER_HOME`, which is
what a single machine wants; `deploy/` and `docs/scaling.md` hold the Postgres and distributed forms.

Runs launched from the UI, a sensor or a schedule wait in the run queue until the daemon dequeues them. Dagster
looks every 5 s by default, and a partition materialized from the UI publishes through two queued runs (the
bucket run, then the publish run `publish_after_build` requests), so the queue alone added up to 10 s to a
change the CLI publishes in 15–20 s. The queue is looked at every second instead (`dequeue_interval_seconds`),
a database read per second on an idle instance. Runs that publish (`jobs.PUBLISH_TAG`) start one at a time."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


NO_COMPUTE_LOGS: dict[str, Any] = {"compute_logs": {"module": "dagster._core.storage.noop_compute_log_manager", "class": "NoOpComputeLogManager"}}
"""What `petrichor build` overrides in the instance it runs its runs on. Dagster captures each step's stdout
and stderr by starting a `tail -F` and a watcher process per step and stopping them with SIGTERM when the step
ends: two process starts per step for output the build's terminal already shows, and a step that waits 30 s
for a `tail` that does not stop (a process whose threads block SIGTERM hands that to its children: seen as a
publish run stalled for minutes inside a long-lived process). Runs the UI, sensors and schedules start keep
the instance's own setting."""


def build_instance() -> Any:
    """The instance of `$DAGSTER_HOME` without per-step compute-log capture (`NO_COMPUTE_LOGS`): what
    `petrichor build` runs its `bucket_build` and `publish` runs on. Events, materializations and run records
    are the same; only the captured stdout/stderr files are not written."""
    from dagster import DagsterInstance
    from dagster._core.instance.ref import InstanceRef

    home = os.environ.get("DAGSTER_HOME")
    if not home:
        return DagsterInstance.get()  # Dagster's own error names the missing setting
    return DagsterInstance.from_ref(InstanceRef.from_dir(home, overrides=NO_COMPUTE_LOGS))
