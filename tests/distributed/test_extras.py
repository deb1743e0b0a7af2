"""Each optional extra installs beside the pinned Dagster and provides what `docs/scaling.md` and `deploy/`
configure: the instance storage of `.[postgres]`, the executor and broker client of `.[celery]` (which the bucket
job then accepts), the executor and run launcher of `.[k8s]`. An extra that is not installed skips its test."""

from __future__ import annotations

import importlib
import tomllib
from importlib.metadata import version

import pytest

from tests.conftest import REPO

PROVIDES = {
    "postgres": [
        "dagster_postgres:DagsterPostgresStorage",
        "dagster_postgres:PostgresEventLogStorage",
        "dagster_postgres:PostgresRunStorage",
        "dagster_postgres:PostgresScheduleStorage",
    ],
    "celery": ["dagster_celery:celery_executor", "dagster_celery.app:app", "redis:Redis"],
    "k8s": ["dagster_k8s:k8s_job_executor", "dagster_k8s:K8sRunLauncher"],
}


def _requirements(extra: str) -> list[tuple[str, str]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [tuple(r.split("==")) for r in project["optional-dependencies"][extra]]


@pytest.mark.parametrize("extra", sorted(PROVIDES))
def test_an_installed_extra_provides_its_executor_or_storage_at_the_pinned_versions(extra):
    for module_name, _ in (p.split(":") for p in PROVIDES[extra]):
        pytest.importorskip(module_name, reason=f"the {extra} extra is not installed: pip install '.[{extra}]'")
    for name, pinned in _requirements(extra):
        assert version(name) == pinned, name
    assert version("dagster") == importlib.import_module("dagster").__version__
    for path in PROVIDES[extra]:
        module_name, attr = path.split(":")
        assert getattr(importlib.import_module(module_name), attr) is not None, path


def test_with_dagster_celery_the_bucket_job_accepts_the_deploy_executor_file(monkeypatch):
    """The run config `PETRICHOR_CELERY_CONFIG` gives the bucket run validates against the bucket job's
    executor, and that executor is Dagster's Celery executor with the file's broker."""
    pytest.importorskip("dagster_celery", reason="the celery extra is not installed: pip install '.[celery]'")
    from dagster._core.execution.api import create_execution_plan

    from petrichor_pipeline.definitions import bucket_build_job_def
    from petrichor_pipeline.jobs import parallel_execution

    monkeypatch.setenv("PETRICHOR_CELERY_CONFIG", str(REPO / "deploy" / "celery.yaml"))
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://broker.invalid:6379/0")
    monkeypatch.setenv("CELERY_RESULT_BACKEND", "redis://broker.invalid:6379/1")
    config = parallel_execution(4)
    assert config == {
        "execution": {
            "config": {
                "celery": {
                    "broker": {"env": "CELERY_BROKER_URL"},
                    "backend": {"env": "CELERY_RESULT_BACKEND"},
                    "config_source": {"worker_prefetch_multiplier": 1, "broker_connection_retry_on_startup": True},
                }
            }
        }
    }
    plan = create_execution_plan(
        bucket_build_job_def(), run_config=config, tags={"dagster/asset_partition_range_start": "00", "dagster/asset_partition_range_end": "0f"}
    )
    assert plan.artifacts_persisted  # what the Celery executor requires of a job


def test_a_celery_file_that_is_missing_or_wrong_is_refused_naming_it(tmp_path, monkeypatch):
    from petrichor_pipeline.executors import celery_execution

    with pytest.raises(ValueError, match="cannot read the Celery executor file"):
        celery_execution(str(tmp_path / "missing.yaml"))
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("execution:\n  config:\n    multiprocess: {}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a Celery executor file"):
        celery_execution(str(wrong))
    monkeypatch.delenv("PETRICHOR_CELERY_CONFIG", raising=False)
    assert celery_execution() is None
