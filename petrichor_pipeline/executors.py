"""The bucket run's executor: in the run's process, Dagster's multiprocess executor, or Dagster's Celery
executor (workers on other machines, `petrichor[celery]`), chosen by the run's config.

`petrichor build` and the nightly rebuild send a parallel bucket run to Celery workers when
`PETRICHOR_CELERY_CONFIG` names the executor file the workers were started with
(`dagster-celery worker start -y FILE`, `deploy/celery.yaml`): one file for both ends, so the builder and
its workers cannot disagree on the broker. Without it they use the multiprocess executor (`jobs.parallel_execution`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from dagster import ExecutorRequirement, Field, Selector, executor
from dagster._core.definitions.executor_definition import (
    IN_PROC_CONFIG,
    MULTI_PROC_CONFIG,
    _core_in_process_executor_creation,
    _core_multiprocess_executor_creation,
    multiple_process_executor_requirements,
)
from dagster._core.execution.retries import RetryMode

CELERY_CONFIG_ENV = "PETRICHOR_CELERY_CONFIG"
"""Path of the Celery executor's file (`execution: config: {broker, backend, config_source}`)."""


def _celery_executor_class() -> type | None:
    """Dagster's Celery executor, run so that a step killed with its worker never holds a pool's slot, or
    None where `petrichor[celery]` is not installed."""
    try:
        from dagster_celery.executor import CeleryExecutor
    except ImportError:
        return None

    class SlotReleasingCeleryExecutor(CeleryExecutor):
        """Dagster frees a step's concurrency slot when the step reports success or failure. A step whose
        worker process died (killed, out of memory) reports neither: Celery answers `WorkerLostError` and the
        run fails, but the slot stays claimed and a pool with a limit of 1 (`petrichor_model`,
        `petrichor_embed`) would block every later run. When the run's steps are over, none of them can hold
        a slot any more (Celery tasks the loop still waited on have all answered), so the run's slots are freed."""

        def execute(self, plan_context: Any, execution_plan: Any):
            try:
                yield from super().execute(plan_context, execution_plan)
            finally:
                storage = plan_context.instance.event_log_storage
                if storage.supports_global_concurrency_limits:
                    storage.free_concurrency_slots_for_run(plan_context.dagster_run.run_id)

    return SlotReleasingCeleryExecutor


def _choices() -> dict[str, Any]:
    choices: dict[str, Any] = {"multiprocess": MULTI_PROC_CONFIG, "in_process": IN_PROC_CONFIG}
    try:
        from dagster_celery.executor import CELERY_CONFIG
    except ImportError:
        return choices
    return {**choices, "celery": CELERY_CONFIG}


def _requirements(config: Mapping[str, object]) -> list[ExecutorRequirement]:
    return list(multiple_process_executor_requirements()) if "in_process" not in config else []


@executor(
    name="bucket_executor",
    config_schema=Field(Selector(_choices()), default_value={"multiprocess": {}}),
    requirements=_requirements,
)
def bucket_executor(init_context: Any) -> Any:
    """Dagster's `multi_or_in_process_executor` (`multiprocess` or `in_process` run config), plus `celery`
    (Dagster's `celery_executor` config) where dagster-celery is installed."""
    config = init_context.executor_config
    if "in_process" in config:
        return _core_in_process_executor_creation(config["in_process"])
    if "celery" in config:
        celery = _celery_executor_class()
        if celery is None:  # the config validated, so the schema had it: cannot happen without the library
            raise RuntimeError("the bucket run asks for Celery but dagster-celery is not installed: pip install 'petrichor[celery]'")
        cfg = config["celery"]
        return celery(
            broker=cfg.get("broker"),
            backend=cfg.get("backend"),
            config_source=cfg.get("config_source"),
            include=cfg.get("include"),
            retries=RetryMode.from_config(cfg["retries"]),
        )
    return _core_multiprocess_executor_creation(config["multiprocess"])


def celery_execution(path: str | None = None) -> dict | None:
    """The bucket run's `execution` run config for the Celery executor file at `path` (default
    `$PETRICHOR_CELERY_CONFIG`), or None when none is named. A file that is missing or not an executor file,
    or Celery without `petrichor[celery]`, is a ValueError naming the file."""
    raw = path if path is not None else os.environ.get(CELERY_CONFIG_ENV, "").strip()
    if not raw:
        return None
    file = Path(raw)
    try:
        doc = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{CELERY_CONFIG_ENV}={raw}: cannot read the Celery executor file: {exc}") from exc
    config = doc.get("execution", {}).get("config") if isinstance(doc, dict) and isinstance(doc.get("execution"), dict) else None
    if not isinstance(config, dict) or not config.get("broker"):
        raise ValueError(f"{CELERY_CONFIG_ENV}={raw}: not a Celery executor file (expected execution: config: broker: ...)")
    if _celery_executor_class() is None:
        raise ValueError(f"{CELERY_CONFIG_ENV}={raw}: the Celery executor needs dagster-celery: pip install 'petrichor[celery]'")
    return {"execution": {"config": {"celery": config}}}
