"""A build past one machine, as `docs/scaling.md` deploys it: the Dagster instance on PostgreSQL
(`deploy/dagster.yaml`), the bucket steps on Dagster's Celery executor with a Redis broker and two worker
processes started by `dagster-celery worker start -y deploy/celery.yaml`, the data folder on S3 (moto's server),
the builder's staging folder the one local folder the workers share.

In order, on one deployment: the bundled corpus built that way publishes to the store the in-process build's
snapshot, table for table and row for row; a one-article edit whose worker process is killed in the middle of a
model step fails that step (Celery's `WorkerLostError`, `executors._StepResult`) and the run, and leaves
`CURRENT` where it was on the store and locally, and the next build rebuilds
that one bucket on the workers and publishes it; two runs side by side never run two steps of one model pool at
once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import boto3
import pyarrow as pa
import pytest
from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus, RunsFilter

from petrichor_core.contract.current import read_current
from petrichor_core.contract.manifest import read_manifest, read_table
from petrichor_core.contract.schemas import SCHEMAS, UNIQUE
from petrichor_core.object_store import SnapshotMirror
from petrichor_pipeline.assets._metadata import EMBED_POOL, MODEL_POOL
from petrichor_pipeline.jobs import all_assets, bucket_assets
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.runner import run_build
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from tests.conftest import CORPUS, EMBED_CACHE, REPO
from tests.distributed.services import DEPLOY, celery_app
from tests.storage.conftest import object_store

pytestmark = [
    pytest.mark.slow,
    # dagster-celery registers its task again for every step it submits; Celery warns each time
    pytest.mark.filterwarnings("ignore:Task name 'execute_plan' is already registered"),
]

EDITED = "petrichor-en/guides/access-control.md"
BUCKET = "petrichor-distributed"


@dataclass
class Deployment:
    corpus: Path
    staging: Path
    root: Path
    store: object
    env: dict[str, str]


@pytest.fixture(scope="module")
def deployment(cluster, s3_server, tmp_path_factory):
    """The builder's environment: a private copy of the bundled corpus, `s3://petrichor-distributed/kb` on the
    moto server, a staging folder, the cluster's instance and broker, and `PETRICHOR_CELERY_CONFIG` naming the
    file the workers were started with."""

    root = tmp_path_factory.mktemp("distributed")
    corpus, staging = root / "corpus", root / "staging"
    shutil.copytree(CORPUS, corpus)
    boto3.client(
        "s3", endpoint_url=s3_server.endpoint_url, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    ).create_bucket(Bucket=BUCKET)
    env = {
        **cluster.env,
        **s3_server.env(BUCKET),
        "PETRICHOR_LOCAL_DIR": str(staging),
        "PETRICHOR_CORPUS": str(corpus),
        "PETRICHOR_EMBED_CACHE": str(EMBED_CACHE),
        "PETRICHOR_CELERY_CONFIG": str(DEPLOY / "celery.yaml"),
    }
    mp = pytest.MonkeyPatch()
    for name, value in env.items():
        mp.setenv(name, value)
    for name in (
        "PETRICHOR_DATA_DIR",
        "PETRICHOR_LLM_BASE_URL",
        "PETRICHOR_EMBED_BASE_URL",
        "PETRICHOR_VISION_BASE_URL",
        "PETRICHOR_API_KEYS",
        "AWS_ENDPOINT_URL_S3",
        "AWS_SESSION_TOKEN",
        "PETRICHOR_BUILD_WORKERS",
    ):
        mp.delenv(name, raising=False)
    try:
        yield Deployment(corpus, staging, root, object_store(s3_server, BUCKET), env)
    finally:
        mp.undo()


def _instance():
    return DagsterInstance.get()  # $DAGSTER_HOME/dagster.yaml: deploy/dagster.yaml, on Postgres


def _build(**kwargs):
    with _instance() as instance:
        return run_build(build_context(), instance=instance, parallel=True, **kwargs)


BUILD_DEADLINE_S = 300
"""Far beyond a bucket run of the bundled corpus on the workers (under a minute): a build still running then
waits for a step result that never comes, and the test says so instead of holding the suite."""


def _build_within(cluster, deadline: float = BUILD_DEADLINE_S):
    """`_build()` in a thread, failed with the workers' logs when it has not returned by `deadline` seconds."""
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["build"] = _build()
        except BaseException as exc:  # handed to the test below
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        pytest.fail(f"the build did not return within {deadline} s: a step's result never came back\n{cluster.worker_logs()}")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["build"]


def _celery_steps(run_id: str) -> dict[str, str]:
    """step key -> the Celery worker that ran it, from the run's event log."""
    with _instance() as instance:
        out = {}
        for record in instance.all_logs(run_id):
            event = record.dagster_event
            if event is not None and event.step_key and "in celery worker" in (event.message or ""):
                out[event.step_key] = str(event.event_specific_data.metadata["Celery worker"].value)
        return out


def snapshot_tables(snapshots: Path) -> dict[str, list[dict]]:
    """Every table of the snapshot `CURRENT` names, rows sorted by their key."""

    manifest = read_manifest(snapshots, read_current(snapshots))
    out = {}
    for name in SCHEMAS:
        table: pa.Table = read_table(snapshots, manifest, name)
        key = [UNIQUE[name]] if name in UNIQUE else table.column_names
        out[name] = sorted(table.to_pylist(), key=lambda r: tuple(str(r[k]) for k in key))
    return out


def _mirror(deployment: Deployment, name: str) -> Path:
    """The store's current snapshot, downloaded and verified as a serving replica does."""

    folder = deployment.root / name
    assert SnapshotMirror(deployment.store, folder).sync()
    return folder / "snapshots"


def _edit(deployment: Deployment, rel: str, text: str) -> str:
    path = deployment.corpus / rel
    path.write_text(path.read_text(encoding="utf-8") + f"\n\n## Distributed\n\n{text}\n", encoding="utf-8")
    return article_id_of(rel)


def test_the_bundled_corpus_built_on_celery_workers_publishes_the_in_process_snapshot(deployment, built_corpus, cluster):
    build = _build()
    assert build.ok and build.published, (build.to_json(), cluster.worker_logs())
    assert build.to_json()["articles"]["built"] == built_corpus.summary["articles"]["built"]
    run_id = build.runs[0].run_id
    with _instance() as instance:
        run = instance.get_run_by_id(run_id)
    assert run.job_name == "bucket_build" and "celery" in run.run_config["execution"]["config"]
    steps = _celery_steps(run_id)
    assert set(steps) == {a.key.to_user_string() for a in bucket_assets(build_context().settings)}
    assert len(set(steps.values())) == 2, steps  # both workers took steps

    assert deployment.store.read_pointer().version == build.snapshot_version
    distributed, in_process = snapshot_tables(_mirror(deployment, "replica-1")), snapshot_tables(built_corpus.data_dir / "snapshots")
    for name, rows in in_process.items():
        assert len(distributed[name]) == len(rows), name
        assert distributed[name] == rows, name


def _kill_when_started(step: str, found: dict, stop: threading.Event) -> None:
    """SIGKILL the worker process that runs `step` of the running bucket run, as soon as it starts the step's
    resources (the step's first event from the worker, which carries the process id)."""

    with _instance() as instance:
        while not stop.is_set():
            runs = instance.get_runs(RunsFilter(job_name="bucket_build", statuses=[DagsterRunStatus.STARTED]), limit=1)
            for record in instance.all_logs(runs[0].run_id, of_type=DagsterEventType.RESOURCE_INIT_STARTED) if runs else []:
                event = record.dagster_event
                if event.step_key == step and event.pid not in (None, os.getpid()):
                    os.kill(event.pid, signal.SIGKILL)
                    found.update(run_id=runs[0].run_id, pid=event.pid, at=time.monotonic())
                    return
            time.sleep(0.05)


def test_a_worker_killed_mid_run_keeps_current_and_the_next_build_rebuilds_the_edited_bucket(deployment, cluster):
    """A one-article edit built on the workers, whose worker process is killed in the `questions` step: the
    run fails, nothing moves; the next build rebuilds that one bucket on the workers and publishes it."""
    before = deployment.store.read_pointer().version
    assert before == read_current(deployment.staging / "snapshots")
    old = snapshot_tables(deployment.staging / "snapshots")
    aid = _edit(deployment, EDITED, "A worker was killed while this bucket was built.")
    found: dict = {}
    stop = threading.Event()
    killer = threading.Thread(target=_kill_when_started, args=("questions", found, stop), daemon=True)
    killer.start()
    try:
        failed = _build_within(cluster)
    finally:
        stop.set()
        killer.join(10)
    assert found, "the questions step never started on a worker"
    assert not failed.ok and not failed.published, failed.to_json()
    assert found["run_id"] in failed.failed_run, failed.to_json()
    with _instance() as instance:
        assert instance.all_logs(found["run_id"], of_type=DagsterEventType.RUN_FAILURE)
        failed_steps = {r.dagster_event.step_key: r.dagster_event for r in instance.all_logs(found["run_id"], of_type=DagsterEventType.STEP_FAILURE)}
        held = [c.run_id for pool in (MODEL_POOL, EMBED_POOL) for c in instance.event_log_storage.get_concurrency_info(pool).claimed_slots]
    assert set(failed_steps) == {"questions"}, failed_steps  # the killed step fails as a step, the run's other steps end
    error = failed_steps["questions"].event_specific_data.error.to_string()
    assert "WorkerLostError" in error and "SIGKILL" in error, error
    assert held == []  # the killed step's slot of petrichor_model was freed with its failure
    assert deployment.store.read_pointer().version == before
    assert read_current(deployment.staging / "snapshots") == before

    app = celery_app(cluster.env)  # the killed worker process was replaced: two workers answer
    assert len(app.control.ping(timeout=2.0)) == 2

    build = _build_within(cluster)
    assert build.ok and build.published, (build.to_json(), cluster.worker_logs())
    assert build.snapshot_version != before and deployment.store.read_pointer().version == build.snapshot_version
    assert build.materialized == [bucket_of(aid)] and len(build.skipped) == 15
    assert set(build.runs[0].calls_by_article) == {aid}
    assert _celery_steps(build.runs[0].run_id)  # the bucket run's steps ran on the workers
    new = snapshot_tables(_mirror(deployment, "replica-2"))
    assert {r["article_id"] for r in new["articles"]} == {r["article_id"] for r in old["articles"]}
    versions = {r["article_id"]: r["article_version"] for r in old["articles"]}
    assert [r["article_id"] for r in new["articles"] if versions[r["article_id"]] != r["article_version"]] == [aid]
    assert any("A worker was killed while this bucket was built." in r["content"] for r in new["chunks"] if r["article_id"] == aid)
    assert [r for r in new["chunks"] if r["article_id"] != aid] == [r for r in old["chunks"] if r["article_id"] != aid]


def _step_spans(instance, run_id: str) -> dict[str, tuple[float, float]]:
    """step -> (start, end) from the run's event log, as the workers reported them."""
    starts, ends = {}, {}
    for record in instance.all_logs(run_id, of_type={DagsterEventType.STEP_START, DagsterEventType.STEP_SUCCESS, DagsterEventType.STEP_FAILURE}):
        (starts if record.dagster_event.event_type == DagsterEventType.STEP_START else ends)[record.dagster_event.step_key] = record.timestamp
    return {k: (starts[k], ends[k]) for k in starts if k in ends}


def _sample_pools(pools: tuple[str, ...], samples: list, stop: threading.Event) -> None:
    """What the instance records of each pool, every 0.1 s: the steps holding its slots and the steps waiting for one."""
    with _instance() as instance:
        while not stop.is_set():
            for pool in pools:
                info = instance.event_log_storage.get_concurrency_info(pool)
                holding = [(c.run_id, c.step_key) for c in info.claimed_slots]
                waiting = [(p.run_id, p.step_key) for p in info.pending_steps if p.assigned_timestamp is None]
                samples.append((pool, holding, waiting))
            time.sleep(0.1)


def test_the_model_pools_hold_across_two_runs_side_by_side(deployment, cluster):
    """Two bucket runs over different buckets, each rebuilding its articles, launched at once from two processes
    (`launch_run`) onto the two workers: at no moment do two steps of one pool run, by the instance's claims and
    by the steps' own start and end, and a step of one run waits while the other run's step holds the pool."""
    pools = (MODEL_POOL, EMBED_POOL)
    pool_of = {a.key.to_user_string(): a.op.pool for a in all_assets() if getattr(a, "op", None) is not None and a.op.pool}
    samples: list = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_pools, args=(pools, samples, stop), daemon=True)
    sampler.start()
    try:
        launched = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.distributed.launch_run", first, last],
                cwd=REPO,
                env=os.environ.copy(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for first, last in (("00", "03"), ("04", "07"))
        ]
        outcomes = []
        for proc in launched:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-3000:]
            outcomes.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        stop.set()
        sampler.join(10)
    assert all(o["success"] for o in outcomes), (outcomes, cluster.worker_logs())
    run_ids = {o["run_id"] for o in outcomes}

    with _instance() as instance:
        spans = [(run_id, pool_of.get(step), start, end) for run_id in run_ids for step, (start, end) in _step_spans(instance, run_id).items()]
    for pool in pools:
        held = sorted((start, end, run_id) for run_id, p, start, end in spans if p == pool)
        assert len(held) == 6 and {r for _, _, r in held} == run_ids, (pool, held)  # three steps of each pool in each run
        assert all(end <= next_start for (_, end, _), (next_start, _, _) in zip(held, held[1:])), f"two {pool} steps ran at once: {held}"
        mine = [(holding, waiting) for p, holding, waiting in samples if p == pool]
        assert max(len(holding) for holding, _ in mine) == 1, pool  # the instance never granted a second slot
    # the limit acted across the runs: a step of one run waited while the other run's step held the pool
    assert any(waiter != holder for _, holding, waiting in samples for holder, _ in holding for waiter, _ in waiting), samples[-20:]


def test_a_step_whose_worker_dies_fails_while_the_runs_other_steps_run_to_their_end(deployment, cluster):
    """One step kills its worker process while an independent step runs and a third waits for that one
    (`lost_worker_job`). The killed step fails with Celery's `WorkerLostError`, the other two run, and the run
    ends failed. Dagster's Celery loop alone stopped submitting steps after the error yet waited for them."""
    from dagster import execute_job, reconstructable

    from petrichor_pipeline.executors import celery_execution
    from tests.distributed.lost_worker_job import lost_worker_job

    outcome: dict = {}

    def target() -> None:
        with (
            _instance() as instance,
            execute_job(reconstructable(lost_worker_job), instance=instance, run_config=celery_execution(), raise_on_error=False) as result,
        ):
            outcome.update(run_id=result.run_id, success=result.success)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(BUILD_DEADLINE_S)
    assert not thread.is_alive(), f"the run did not end within {BUILD_DEADLINE_S} s\n{cluster.worker_logs()}"
    assert outcome and outcome["success"] is False, outcome
    with _instance() as instance:
        ends = {
            r.dagster_event.step_key: r.dagster_event
            for r in instance.all_logs(outcome["run_id"], of_type={DagsterEventType.STEP_SUCCESS, DagsterEventType.STEP_FAILURE})
        }
    assert {k: e.event_type for k, e in ends.items()} == {
        "dies": DagsterEventType.STEP_FAILURE,
        "slow": DagsterEventType.STEP_SUCCESS,
        "after_slow": DagsterEventType.STEP_SUCCESS,
    }, ends
    assert "WorkerLostError" in ends["dies"].event_specific_data.error.to_string()
