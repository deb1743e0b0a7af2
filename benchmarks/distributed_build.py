"""The bundled corpus built past one machine, as `docs/scaling.md` deploys it, against the in-process build
on the same corpus and machine.

Three deployments, each a full build of the bundled corpus and then a one-article edit (the same edit for
all), every build `run_build` in a fresh process as `petrichor build` is:

- `in_process`: the everyday build: SQLite instance, local data folder, steps in the build's process;
- `postgres_s3`: the same in-process run on the distributed deployment's storage: the instance on PostgreSQL
  (`deploy/dagster.yaml`), the data folder on S3 (moto's server) — what the storage alone costs;
- `celery`: that storage and the bucket run on Dagster's Celery executor (`deploy/celery.yaml`, Redis broker,
  two worker processes with one step each) — what the executor adds.

The services are the tests' (`tests/distributed/services.py`: a temporary Postgres cluster, `redis-server`,
two `dagster-celery` workers, moto); each deployment's embedding cache is seeded with the suite's shipped
vectors, so only the edit's new texts are embedded, by every deployment alike. Reported per build: wall time, the bucket and
publish runs' wall time, the bucket steps' own seconds (their `STEP_SUCCESS` durations, summed), per step the
seconds outside its body (`overhead`: on Celery from the orchestrator submitting the task to the worker
starting the step, in process the gap after the previous step), and the seconds per materialization event
written (the storage's cost per event). Ratios are to `in_process`.

    .venv/bin/python benchmarks/distributed_build.py [--workdir DIR] [--json]

Needs what `tests/distributed` needs: Debian's `postgresql` and `redis-server`, and `.[postgres,celery]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

EDITED = "petrichor-en/guides/access-control.md"
EDIT = "\n\n## Build machines\n\nThe bucket steps of this build ran where the deployment put them.\n"
MODES = ("in_process", "postgres_s3", "celery")


def _load() -> float:
    return round(os.getloadavg()[0], 1)


def _run_metrics(instance: Any, run_id: str) -> dict[str, Any]:
    """A run's wall time and its steps' own seconds and overheads, from the instance's event log."""
    from dagster import DagsterEventType

    record = instance.get_run_record_by_id(run_id)
    submitted, started, ended, durations, materialized = {}, {}, {}, {}, {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None or not event.step_key:
            continue
        key, at = event.step_key, entry.timestamp
        if event.event_type == DagsterEventType.ENGINE_EVENT and (event.message or "").startswith("Submitting celery task"):
            submitted[key] = at
        elif event.event_type == DagsterEventType.STEP_START:
            started[key] = at
        elif event.event_type == DagsterEventType.STEP_SUCCESS:
            ended[key] = at
            durations[key] = event.event_specific_data.duration_ms / 1000
        elif event.event_type == DagsterEventType.ASSET_MATERIALIZATION:
            materialized.setdefault(key, []).append(at)
    run_start = record.start_time or min(started.values(), default=0.0)
    overhead = {}
    for key, at in started.items():
        if key in submitted:
            overhead[key] = at - submitted[key]  # queue, pickup, the job's plan and resources on the worker
        else:
            before = [end for k, end in ended.items() if end <= at and k != key]
            overhead[key] = at - max(before, default=run_start)  # in process: the gap after the previous step
    gaps = [b - a for times in materialized.values() for a, b in zip(times, times[1:])]
    return {
        "seconds": round((record.end_time or 0) - (record.start_time or 0), 2),
        "steps": len(durations),
        "step_seconds": round(sum(durations.values()), 2),
        "overhead_per_step": round(statistics.mean(overhead.values()), 2) if overhead else None,
        "overhead_by_step": {k: round(v, 2) for k, v in sorted(overhead.items())},
        "seconds_per_materialization": round(statistics.median(gaps), 3) if gaps else None,
    }


def one_build(mode: str) -> dict[str, Any]:
    """One `run_build` in this process (the environment names the deployment); its figures as JSON."""
    from dagster import DagsterInstance

    from petrichor_pipeline.resources import build_context
    from petrichor_pipeline.runner import run_build

    load = _load()
    started = time.perf_counter()
    with DagsterInstance.get() as instance:
        build = run_build(build_context(), instance=instance, parallel=mode == "celery")
        wall = time.perf_counter() - started
        if not (build.ok and build.published):
            raise SystemExit(json.dumps(build.to_json()))
        runs = [_run_metrics(instance, run.run_id) for run in build.runs]
    return {
        "mode": mode,
        "wall_s": round(wall, 2),
        "articles_built": build.articles["built"],
        "embedded_texts": build.embedded_texts,
        "bucket_run": runs[0],
        "publish_run": runs[1] if len(runs) > 1 else None,
        "load": [load, _load()],
    }


def _build_in_fresh_process(mode: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--one-build", mode], env=env, capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"{mode} build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _create_database(postgres: Any, name: str) -> None:
    import psycopg2

    from tests.distributed.services import PG_PASSWORD, PG_USER

    conn = psycopg2.connect(host=postgres.host, port=postgres.port, user=PG_USER, password=PG_PASSWORD, dbname="postgres")
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    conn.close()


def run(workdir: Path) -> dict[str, Any]:
    import boto3

    from tests.distributed import services
    from tests.embed_seed import install

    base = {k: v for k, v in os.environ.items() if not k.startswith(("PETRICHOR_", "AWS_", "DAGSTER_", "CELERY_"))}
    base.update(PYTHONPATH=str(REPO))
    results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    with services.postgres_cluster() as pg, services.redis_broker(workdir / "redis") as redis, services.s3_endpoint() as s3:
        aws = services.s3_env(s3)
        boto3.client("s3", endpoint_url=s3, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing").create_bucket(
            Bucket="bench"
        )
        _create_database(pg, "dagster_in_process")
        with services.celery_cluster(pg, redis, aws, workdir / "cluster") as cluster:
            envs = {}
            for mode in MODES:
                root = workdir / mode
                shutil.copytree(REPO / "data" / "corpus", root / "corpus")
                install(root / "embed_cache")  # a cache of its own: the edit's new texts are embedded in every deployment
                env = {**base, "PETRICHOR_CORPUS": str(root / "corpus"), "PETRICHOR_EMBED_CACHE": str(root / "embed_cache")}
                if mode == "in_process":
                    (root / "dagster_home").mkdir()
                    (root / "dagster_home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
                    env.update(PETRICHOR_DATA=str(root / "data"), DAGSTER_HOME=str(root / "dagster_home"))
                else:
                    env.update({**cluster.env, **aws}, PETRICHOR_DATA=f"s3://bench/{mode}", PETRICHOR_LOCAL_DIR=str(root / "staging"))
                    if mode == "postgres_s3":
                        home = root / "dagster_home"
                        home.mkdir()
                        shutil.copyfile(services.DEPLOY / "dagster.yaml", home / "dagster.yaml")
                        env.update(DAGSTER_HOME=str(home), DAGSTER_PG_DB="dagster_in_process")
                    else:
                        env["PETRICHOR_CELERY_CONFIG"] = str(services.DEPLOY / "celery.yaml")
                envs[mode] = env
            for step in ("full", "edit"):
                for mode in MODES:  # one deployment after the other, so load falls on all alike
                    if step == "edit":
                        path = workdir / mode / "corpus" / EDITED
                        path.write_text(path.read_text(encoding="utf-8") + EDIT, encoding="utf-8")
                    result = _build_in_fresh_process(mode, envs[mode])
                    result["build"] = step
                    results[mode].append(result)
                    print(
                        f"{mode:12} {step:5} {result['wall_s']:7.1f} s  bucket run {result['bucket_run']['seconds']:6.1f} s  "
                        f"overhead/step {result['bucket_run']['overhead_per_step']} s  load {result['load']}",
                        file=sys.stderr,
                    )
    ratios = {}
    for i, step in enumerate(("full", "edit")):
        base_run = results["in_process"][i]
        for mode in MODES[1:]:
            other = results[mode][i]
            ratios[f"{mode}/{step}"] = {
                "wall": round(other["wall_s"] / base_run["wall_s"], 2),
                "bucket_run": round(other["bucket_run"]["seconds"] / base_run["bucket_run"]["seconds"], 2),
            }
    return {"cpus": os.cpu_count(), "results": results, "ratios": ratios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one-build", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_build:
        print(json.dumps(one_build(args.one_build)))
        return
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="petrichor-distributed-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    out = run(workdir)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{out['cpus']} cores")
    print(
        f"{'deployment':12} {'build':5} {'wall s':>7} {'bucket s':>9} {'steps s':>8} {'overhead/step s':>16} {'s/materialization':>18} {'publish s':>10} {'× in process':>13}  load"
    )
    for mode, runs in out["results"].items():
        for r in runs:
            b, p = r["bucket_run"], r["publish_run"] or {}
            ratio = out["ratios"].get(f"{mode}/{r['build']}", {}).get("wall", 1.0)
            print(
                f"{mode:12} {r['build']:5} {r['wall_s']:7.1f} {b['seconds']:9.1f} {b['step_seconds']:8.1f} {b['overhead_per_step']!s:>16} "
                f"{b['seconds_per_materialization']!s:>18} {p.get('seconds', 0):10.1f} {ratio:13.2f}  {r['load']}"
            )


if __name__ == "__main__":
    main()
