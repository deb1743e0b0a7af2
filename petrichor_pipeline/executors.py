"""The bucket run's executor: in the run's process, Dagster's multiprocess executor, or Dagster's Celery
executor (workers on other machines, `petrichor[celery]`), chosen by the run's config.

`petrichor build` and the nightly rebuild send a parallel bucket run to Celery workers when
`PETRICHOR_CELERY_CONFIG` names the executor file the workers were started with
(`dagster-celery worker start -y FILE`, `deploy/celery.yaml`): one file for both ends, so the builder and
its workers cannot disagree on the broker. Without it they use the multiprocess executor (`jobs.parallel_execution`).
"""

from __future__ import annotations

import os
import sys
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


class _StepResult:
    """A step's Celery result, read by Dagster's Celery loop (`ready`, `get`, `revoke`). A task that raised
    instead of returning the step's events (its worker process died: `WorkerLostError`) reads as the step's
    own failure event, with the task's error. Dagster's loop would otherwise only note the error and stop
    submitting steps, yet keep waiting for the steps it no longer submits: the run never ended. As a step
    failure, the steps after it are skipped, the others run, and the run fails naming the step."""

    def __init__(self, result: Any, plan_context: Any, step: Any) -> None:
        self._result, self._plan_context, self._step = result, plan_context, step

    def ready(self) -> bool:
        return self._result.ready()

    def revoke(self, *args: Any, **kwargs: Any) -> Any:
        return self._result.revoke(*args, **kwargs)

    def get(self) -> list[str]:
        from celery.exceptions import TaskRevokedError
        from dagster import DagsterEvent
        from dagster._core.execution.plan.objects import StepFailureData
        from dagster._serdes import serialize_value
        from dagster._utils.error import serializable_error_info_from_exc_info

        try:
            return self._result.get()
        except TaskRevokedError:  # the run was stopped: Dagster's loop reports the revoke itself
            raise
        except Exception:
            error = serializable_error_info_from_exc_info(sys.exc_info())
            context = self._plan_context.for_step(self._step)
            event = DagsterEvent.step_failure_event(
                context,
                StepFailureData(error=error, user_failure_data=None),
                message=f'Step "{self._step.key}" got no result from its Celery worker: {error.message.strip()}',
            )
            return [serialize_value(event)]


def _celery_executor_class() -> type | None:
    """Dagster's Celery executor, run so that a step whose worker died fails as a step (`_StepResult`) and
    never holds a pool's slot, or None where `petrichor[celery]` is not installed."""
    try:
        from dagster_celery.core_execution_loop import core_celery_execution_loop
        from dagster_celery.executor import CeleryExecutor, _submit_task
    except ImportError:
        return None

    def submit(app: Any, plan_context: Any, step: Any, queue: str, priority: int, known_state: Any) -> _StepResult:
        return _StepResult(_submit_task(app, plan_context, step, queue, priority, known_state), plan_context, step)

    class StepFailingCeleryExecutor(CeleryExecutor):
        """Dagster frees a step's concurrency slot when the step reports success or failure. A step whose
        worker process died (killed, out of memory) reports neither itself; its failure is reported here
        (`_StepResult`), and when the run's steps are over none of them can hold a slot any more, so the
        run's slots are freed whatever happened (a pool with a limit of 1, `petrichor_model` or
        `petrichor_embed`, would otherwise block every later run)."""

        def execute(self, plan_context: Any, execution_plan: Any):
            try:
                yield from core_celery_execution_loop(plan_context, execution_plan, step_execution_fn=submit)
            finally:
                storage = plan_context.instance.event_log_storage
                if storage.supports_global_concurrency_limits:
                    storage.free_concurrency_slots_for_run(plan_context.dagster_run.run_id)

    return StepFailingCeleryExecutor


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
