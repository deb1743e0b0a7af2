"""A one-article change published through `petrichor build` and through what the Dagster UI launches.

Builds the bundled corpus once in a work folder (a copy of it; the suite's shipped passage vectors seed the
embedding cache when present), then in each round edits one Chinese article and publishes the change three ways,
in an order that rotates each round, every command in a fresh process as a run worker is:

- `cli`: `petrichor build`;
- `ui`: the run the asset graph's Materialize launches for the edited partition of the bucket assets (Dagster's
  implicit asset job with the code location's executor: `dagster asset materialize --partition`), then the
  publish run `publish_after_build` requests for it (checked by evaluating the sensor; `dagster job execute -j
  publish`); the daemon's sensor interval is not counted;
- `ui_graph`: the whole graph selected for the edited partition: one run that builds and publishes;
- `ui_daemon` (`--daemon`): what a UI user waits for, every wait counted: with `dagster dev` running on the work
  folder's instance (`petrichor_pipeline/instance.py`'s configuration), the run the UI's Materialize submits for
  the edited partition of the bucket assets (GraphQL, as the UI does), queued, dequeued and launched by the
  daemon, then the publish run `publish_after_build` requests at its next tick, until `CURRENT` names a
  snapshot holding the edited article's new version;
- `ui_job` (`--daemon`): the same wait for the UI's other way, Jobs > `build_and_publish` > Materialize with the
  edited bucket: one queued run that builds the bucket and publishes, as `petrichor build` does.
  With `--daemon` every path is measured while `dagster dev` runs, so all of them share its idle cost.

Each path's time runs from its first process's start to its last one's exit, and the published snapshot must
hold the edited article's new version. Prints every round, each path's median and its ratio to the CLI.

    .venv/bin/python benchmarks/dagster_ui.py [--rounds 3] [--workdir DIR] [--embed on|off] [--daemon]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

EDITED = "petrichor-zh/overview.md"
DAGSTER = str(Path(sys.executable).parent / "dagster")
REMOTE_SETTINGS = ("PETRICHOR_LLM_BASE_URL", "PETRICHOR_EMBED_BASE_URL", "PETRICHOR_VISION_BASE_URL")
PATHS = ("cli", "ui", "ui_graph")
DAEMON_PATH = "ui_daemon"
JOB_PATH = "ui_job"
PUBLISH_TIMEOUT_S = 300


def environment(work: Path, embed: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in REMOTE_SETTINGS and k != "DAGSTER_HOME"}
    env.update(
        DAGSTER_HOME=str(work / "home"),
        PETRICHOR_DATA=str(work / "data"),
        PETRICHOR_CORPUS=str(work / "corpus"),
        PETRICHOR_EMBED_CACHE=str(work / "embed_cache"),
        PETRICHOR_EMBED=embed,
    )
    return env


def prepare(work: Path) -> None:
    for name in ("corpus", "data", "home"):
        shutil.rmtree(work / name, ignore_errors=True)
    shutil.copytree(REPO / "data" / "corpus", work / "corpus")
    (work / "home").mkdir(parents=True)
    from petrichor_pipeline.instance import write_instance_yaml

    write_instance_yaml(work / "home")
    try:
        from tests.embed_seed import install
    except ImportError:
        return
    install(work / "embed_cache")


def run(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{' '.join(cmd[:4])} failed:\n{out.stderr[-3000:]}")
    return time.perf_counter() - started


def cli_build(env: dict[str, str]) -> float:
    return run([sys.executable, "-c", "from petrichor.cli import main; raise SystemExit(main(['build', '--json']))"], env)


def materialize(env: dict[str, str], select: list[str], partition: str) -> float:
    cmd = [DAGSTER, "asset", "materialize", "-m", "petrichor_pipeline.definitions", "--select", ",".join(select), "--partition", partition]
    return run(cmd, env)


def publish_requested() -> bool:
    """Whether `publish_after_build` requests a publish for the latest run, as the daemon would evaluate it."""
    from dagster import DagsterEventType, DagsterInstance, RunRequest, build_run_status_sensor_context

    from petrichor_pipeline.sensors import publish_after_build

    with DagsterInstance.get() as instance:
        run = instance.get_runs(limit=1)[0]
        success = instance.all_logs(run.run_id, of_type=DagsterEventType.RUN_SUCCESS)[0].dagster_event
        result = publish_after_build(build_run_status_sensor_context("publish_after_build", success, instance, run))
    return isinstance(result, RunRequest)


def published_version(work: Path) -> str | None:
    import pyarrow.parquet as pq

    version = (work / "data" / "snapshots" / "CURRENT").read_text(encoding="utf-8").strip()
    table = pq.read_table(work / "data" / "snapshots" / version / "articles.parquet", columns=["path", "article_version"])
    return dict(zip(table.column("path").to_pylist(), table.column("article_version").to_pylist())).get(EDITED)


def corpus_version(work: Path) -> str:
    from petrichor_pipeline.resources import build_context

    return next(a.article_version for a in build_context(str(work / "data"), str(work / "corpus")).scan().articles if a.path == EDITED)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def code_location_loaded(port: int) -> bool:
    """Whether the webserver answers GraphQL and lists the code location's repository."""
    query = json.dumps({"query": "{ repositoriesOrError { ... on RepositoryConnection { nodes { name } } } }"})
    request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=query.encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            nodes = json.load(response)["data"]["repositoriesOrError"].get("nodes", [])
    except (OSError, KeyError, ValueError):
        return False
    return bool(nodes)


@contextmanager
def dagster_dev(env: dict[str, str]) -> Iterator[object]:
    """`dagster dev` (webserver, daemon, code server) on the work folder's instance; yields a GraphQL client.
    Its children outlive a SIGTERM to the parent, so the whole process group is stopped."""
    from dagster_graphql import DagsterGraphQLClient

    port = free_port()
    log = open(Path(env["DAGSTER_HOME"]) / "dagster-dev.log", "w", encoding="utf-8")  # noqa: SIM115
    proc = subprocess.Popen(
        [DAGSTER, "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        env=env,
        cwd=REPO,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    client = DagsterGraphQLClient("127.0.0.1", port_number=port)
    try:
        deadline = time.monotonic() + 180
        while not code_location_loaded(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"dagster dev did not come up; see {log.name}")
            time.sleep(1)
        time.sleep(6)  # the daemon's first sensor loop has run: its cursors start at what exists now
        yield client
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def through_daemon(work: Path, client: object, steps: list[str] | None, bucket: str, job: str = "__ASSET_JOB") -> dict[str, float]:
    """Submit a run for `bucket` as the UI does (the asset graph's Materialize of the bucket assets `steps`, or
    a job's Materialize), then wait until the published snapshot holds the edited article's new version
    (through the publish run the sensor requests, or the run itself)."""
    from dagster import DagsterInstance

    wanted = corpus_version(work)
    started = time.perf_counter()
    run_id = client.submit_job_execution(  # type: ignore[attr-defined]
        job, asset_selection=steps, tags={"dagster/partition": bucket}
    )
    while published_version(work) != wanted:
        if time.perf_counter() - started > PUBLISH_TIMEOUT_S:
            raise SystemExit(f"{job}: nothing published within {PUBLISH_TIMEOUT_S} s (run {run_id})")
        time.sleep(0.1)
    total = time.perf_counter() - started
    with DagsterInstance.get() as instance:
        stats = instance.get_run_stats(run_id)
    bucket_run = (stats.end_time or 0) - (stats.launch_time or stats.start_time or 0)
    return {"total": total, "bucket_run": bucket_run}


def one_change(
    work: Path,
    env: dict[str, str],
    path: str,
    label: str,
    steps: list[str],
    publish: list[str],
    bucket: str,
    client: object | None = None,
) -> dict[str, float]:
    article = work / "corpus" / EDITED
    article.write_text(article.read_text(encoding="utf-8") + f"\n\n## 修改 {label}\n\n这一段说明第 {label} 次修改。\n", encoding="utf-8")
    if path == "cli":
        timing = {"total": cli_build(env)}
    elif path == "ui":
        bucket_run = materialize(env, steps, bucket)
        if not publish_requested():
            raise SystemExit("publish_after_build did not request a publish after the UI's bucket run")
        publish_run = run([DAGSTER, "job", "execute", "-m", "petrichor_pipeline.definitions", "-j", "publish"], env)
        timing = {"total": bucket_run + publish_run, "bucket_run": bucket_run, "publish_run": publish_run}
    elif path == DAEMON_PATH:
        timing = through_daemon(work, client, steps, bucket)
    elif path == JOB_PATH:
        timing = through_daemon(work, client, None, bucket, "build_and_publish")
    else:
        timing = {"total": materialize(env, steps + publish, bucket)}
    if published_version(work) != corpus_version(work):
        raise SystemExit(f"{path}: the published snapshot does not hold the edited article")
    return timing


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--embed", choices=("on", "off"), default="on")
    parser.add_argument("--daemon", action="store_true", help="also measure ui_daemon and ui_job, with dagster dev running")
    args = parser.parse_args()
    paths = PATHS + ((DAEMON_PATH, JOB_PATH) if args.daemon else ())
    work = args.workdir or Path(tempfile.mkdtemp(prefix="petrichor-dagster-ui-"))
    env = environment(work, args.embed)
    os.environ.update(env)  # this process reads the same instance and settings (the sensor, the checks)

    from petrichor_core.config import load_settings
    from petrichor_pipeline.jobs import PUBLISH_ASSETS, asset_keys, bucket_assets
    from petrichor_pipeline.sources.identity import article_id_of, bucket_of

    steps = [k.to_user_string() for k in asset_keys(bucket_assets(load_settings()))]
    publish = [k.to_user_string() for k in asset_keys(PUBLISH_ASSETS)]
    bucket = bucket_of(article_id_of(EDITED))
    prepare(work)
    print(f"work folder {work}; full build of the bundled corpus: {cli_build(env):.1f} s", flush=True)

    results: dict[str, list[dict[str, float]]] = {p: [] for p in paths}
    with dagster_dev(env) if args.daemon else _nothing() as client:
        for round_ in range(args.rounds):
            order = paths[round_ % len(paths) :] + paths[: round_ % len(paths)]
            for path in order:
                load = os.getloadavg()[0]
                timing = one_change(work, env, path, f"{round_}-{path}", steps, publish, bucket, client)
                results[path].append(timing)
                detail = ", ".join(f"{k} {v:.1f} s" for k, v in timing.items() if k != "total")
                print(f"round {round_ + 1} {path:<9} {timing['total']:6.1f} s  (load {load:.2f}{'; ' + detail if detail else ''})", flush=True)

    cli = statistics.median(t["total"] for t in results["cli"])
    print(f"\nos.cpu_count() = {os.cpu_count()}; edited {EDITED} (bucket {bucket}); embedding {args.embed}; {args.rounds} rounds")
    print(f"{'path':<10} {'median s':>9} {'runs s':>28} {'× cli':>6}")
    for path in paths:
        totals = [t["total"] for t in results[path]]
        median = statistics.median(totals)
        print(f"{path:<10} {median:>9.1f} {', '.join(f'{t:.1f}' for t in totals):>28} {median / cli:>6.2f}")
    print(json.dumps({p: [round(t["total"], 2) for t in r] for p, r in results.items()}))


if __name__ == "__main__":
    main()
