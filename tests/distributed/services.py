"""The services of a distributed build, started on 127.0.0.1 for the tests (`conftest`) and the benchmark
(`benchmarks/distributed_build.py`): a temporary PostgreSQL cluster (Debian's `postgresql`: `initdb` into a
temporary folder, the server on a free port, password authentication), a `redis-server` on a free port as the
Celery broker and result backend, Celery workers started with the repository's `deploy/celery.yaml` as
`docs/scaling.md` starts them, and moto's S3 server.

Each runs in its own process group, killed as a group when its block ends. A program or Python extra that is
missing raises `Unavailable` with the reason (the tests skip with it)."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
PG_USER, PG_PASSWORD, PG_DB = "petrichor", "petrichor-test", "dagster"
WORKERS = 2


class Unavailable(RuntimeError):
    """A service cannot start on this machine; the message says what to install."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGTERM, wait_s: float = 10.0) -> None:
    """Stop a service started in its own session: `sig` to its process group, SIGKILL after `wait_s`."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=wait_s)
    except (ProcessLookupError, PermissionError):
        return
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        proc.wait(timeout=wait_s)


def _wait(ready: Callable[[], bool], what: str, proc: subprocess.Popen, log: Path, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        if ready():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} not ready after {timeout_s:.0f}s: {log.read_text(errors='replace')[-2000:]}")


def _pg_bin(name: str) -> str | None:
    """Debian installs the server's programs under /usr/lib/postgresql/<major>/bin, off PATH: the newest."""
    found = [p for p in glob.glob(f"/usr/lib/postgresql/*/bin/{name}") if p.split("/")[4].isdigit()]
    found.sort(key=lambda p: int(p.split("/")[4]))
    return found[-1] if found else shutil.which(name)


@dataclass(frozen=True)
class Postgres:
    host: str
    port: int

    def env(self) -> dict[str, str]:
        """What `deploy/dagster.yaml` reads."""
        return {
            "DAGSTER_PG_HOST": self.host,
            "DAGSTER_PG_PORT": str(self.port),
            "DAGSTER_PG_USER": PG_USER,
            "DAGSTER_PG_PASSWORD": PG_PASSWORD,
            "DAGSTER_PG_DB": PG_DB,
        }


@contextmanager
def postgres_cluster() -> Iterator[Postgres]:
    """A PostgreSQL cluster in a temporary folder with database `dagster`, SCRAM password authentication on
    127.0.0.1. As root (CI) the server runs as Debian's `postgres` user: PostgreSQL refuses to run as root.
    Durability is switched off (`fsync`): the cluster is thrown away."""
    initdb, server = _pg_bin("initdb"), _pg_bin("postgres")
    if not initdb or not server:
        raise Unavailable("PostgreSQL is not installed (apt-get install postgresql)")
    try:
        import psycopg2
    except ImportError as exc:
        raise Unavailable("psycopg2 is not installed: pip install '.[postgres]'") from exc
    run_as: dict = {}
    if os.geteuid() == 0:
        import pwd

        try:
            user = pwd.getpwnam("postgres")
        except KeyError as exc:
            raise Unavailable("running as root without Debian's postgres user: PostgreSQL cannot start") from exc
        run_as = {"user": user.pw_uid, "group": user.pw_gid}
    root = Path(tempfile.mkdtemp(prefix="petrichor-pg-"))  # not under pytest's folders: the server's user must reach it
    data, log, pwfile = root / "data", root / "server.log", root / "pw"
    pwfile.write_text(PG_PASSWORD + "\n", encoding="utf-8")
    if run_as:
        os.chown(root, run_as["user"], run_as["group"])
        os.chown(pwfile, run_as["user"], run_as["group"])
    proc = None
    try:
        done = subprocess.run(
            [
                initdb,
                "-D",
                str(data),
                "-U",
                PG_USER,
                f"--pwfile={pwfile}",
                "--auth-host=scram-sha-256",
                "--auth-local=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            capture_output=True,
            text=True,
            timeout=180,
            **run_as,
        )
        if done.returncode != 0:
            raise Unavailable(f"initdb failed: {done.stderr.strip()[-500:]}")
        port = free_port()
        args = [
            server,
            "-D",
            str(data),
            "-p",
            str(port),
            "-h",
            "127.0.0.1",
            "-k",
            str(root),
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=200",
        ]
        with open(log, "wb") as out:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, **run_as)

        def connect(dbname: str):
            return psycopg2.connect(host="127.0.0.1", port=port, user=PG_USER, password=PG_PASSWORD, dbname=dbname, connect_timeout=2)

        def ready() -> bool:
            try:
                connect("postgres").close()
                return True
            except psycopg2.OperationalError:
                return False

        _wait(ready, "postgres", proc, log)
        conn = connect("postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE {PG_DB}")
        conn.close()
        yield Postgres("127.0.0.1", port)
    finally:
        if proc is not None:
            kill_group(proc, signal.SIGINT)  # the server's fast shutdown
        shutil.rmtree(root, ignore_errors=True)


@dataclass(frozen=True)
class Redis:
    port: int

    def env(self) -> dict[str, str]:
        """What `deploy/celery.yaml` reads: broker and result backend in two databases of one server."""
        return {"CELERY_BROKER_URL": f"redis://127.0.0.1:{self.port}/0", "CELERY_RESULT_BACKEND": f"redis://127.0.0.1:{self.port}/1"}


@contextmanager
def redis_broker(root: Path) -> Iterator[Redis]:
    """`redis-server` on a free port, nothing persisted."""
    binary = shutil.which("redis-server")
    if not binary:
        raise Unavailable("redis-server is not installed (apt-get install redis-server)")
    try:
        import redis
    except ImportError as exc:
        raise Unavailable("the redis client is not installed: pip install '.[celery]'") from exc
    root.mkdir(parents=True, exist_ok=True)
    port, log = free_port(), root / "redis.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(root)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def ready() -> bool:
        try:
            return bool(redis.Redis(port=port, socket_connect_timeout=1).ping())
        except redis.exceptions.ConnectionError:
            return False

    try:
        _wait(ready, "redis-server", proc, log)
        yield Redis(port)
    finally:
        kill_group(proc)


@contextmanager
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server in this process (its own thread), for the benchmark; the tests share `tests/storage`'s."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError as exc:
        raise Unavailable("moto[server] is not installed") from exc
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server._server.server_address[:2]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def s3_env(endpoint_url: str) -> dict[str, str]:
    """The AWS variables for the moto server (the bucket comes with each run's settings)."""
    return {"AWS_ENDPOINT_URL": endpoint_url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


def celery_app(env: dict[str, str]):
    """A Celery client on the broker `env` names, configured from `deploy/celery.yaml` as the builder is."""
    from dagster_celery.cli import get_validated_config
    from dagster_celery.executor import CeleryExecutor
    from dagster_celery.make_app import make_app

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        config = get_validated_config(str(DEPLOY / "celery.yaml"))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return make_app(CeleryExecutor.for_cli(broker=config["broker"], backend=config["backend"], config_source=config.get("config_source")).app_args())


@dataclass
class Cluster:
    """A distributed build's services and the environment each of its processes is given."""

    env: dict[str, str]
    home: Path
    workers: list[subprocess.Popen] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def worker_logs(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in self.logs)


@contextmanager
def celery_cluster(postgres: Postgres, redis: Redis, aws: dict[str, str], root: Path, workers: int = WORKERS) -> Iterator[Cluster]:
    """A Dagster home holding `deploy/dagster.yaml` and `workers` Celery workers, one step at a time each,
    started as on a build machine: `dagster-celery worker start -A dagster_celery.app -y deploy/celery.yaml`."""
    try:
        import dagster_celery  # noqa: F401
        import dagster_postgres  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f"{exc.name} is not installed: pip install '.[postgres,celery]'") from exc
    home = root / "dagster_home"
    home.mkdir(parents=True)
    shutil.copyfile(DEPLOY / "dagster.yaml", home / "dagster.yaml")
    env = {**postgres.env(), **redis.env(), **aws, "DAGSTER_HOME": str(home)}
    cluster = Cluster(env=env, home=home)
    bin_dir = Path(sys.executable).parent
    worker_env = {k: v for k, v in os.environ.items() if not k.startswith(("PETRICHOR_", "AWS_"))}
    worker_env.update(
        env, PYTHONUNBUFFERED="1", PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    )  # `dagster-celery` starts `celery` from PATH
    try:
        for i in range(workers):
            log = root / f"worker{i}.log"
            cluster.logs.append(log)
            with open(log, "wb") as out:
                cluster.workers.append(
                    subprocess.Popen(
                        [
                            str(bin_dir / "dagster-celery"),
                            "worker",
                            "start",
                            "-A",
                            "dagster_celery.app",
                            "-y",
                            str(DEPLOY / "celery.yaml"),
                            "-n",
                            f"w{i}",
                            "--",
                            "--concurrency",
                            "1",
                        ],
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        env=worker_env,
                        cwd=root,
                        start_new_session=True,
                    )
                )
        app = celery_app(env)
        deadline = time.monotonic() + 120
        while len(app.control.ping(timeout=1.0)) < workers:
            if any(w.poll() is not None for w in cluster.workers) or time.monotonic() > deadline:
                raise RuntimeError(f"Celery workers not ready: {cluster.worker_logs()}")
        yield cluster
    finally:
        for proc in cluster.workers:
            kill_group(proc)
