"""Two `petrichor serve` replicas over the same object store converge on a newly published snapshot, and a
client loop running against both during the move sees no failed request."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from petrichor_core.object_store import publish_remote
from tests.conftest import EMBED_CACHE, REPO
from tests.storage.conftest import object_store, stage_clone

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(conn: http.client.HTTPConnection, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers={"content-type": "application/json"})
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read() or b"{}")


def _wait_for(port: int, version: str, proc: subprocess.Popen, deadline: float) -> None:
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            status, doc = _request(conn, "GET", "/healthz")
            if status == 200 and doc.get("snapshot_version") == version:
                return
        except OSError:
            pass
        assert proc.poll() is None, f"replica on {port} exited with {proc.returncode}"
        assert time.time() < deadline, f"replica on {port} did not serve {version}"
        time.sleep(0.2)


def test_two_replicas_converge_on_a_new_snapshot_without_a_failed_request(built_corpus, s3_server, s3_bucket, tmp_path):
    store = object_store(s3_server, s3_bucket)
    first = stage_clone(built_corpus.data_dir, tmp_path / "stage", salt="first")
    publish_remote(store, tmp_path / "stage", first, store.read_pointer())

    procs: list[subprocess.Popen] = []
    ports = [_free_port(), _free_port()]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETRICHOR_", "AWS_"))}
    env.update(s3_server.env(s3_bucket), PETRICHOR_EMBED_CACHE=str(EMBED_CACHE), PETRICHOR_RELOAD_INTERVAL="0.3")
    try:
        for i, port in enumerate(ports):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "petrichor.cli", "serve", "--port", str(port)],
                    cwd=REPO,
                    env={**env, "PETRICHOR_LOCAL_DIR": str(tmp_path / f"replica{i}")},
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        deadline = time.time() + 180
        for port, proc in zip(ports, procs):
            _wait_for(port, first.version, proc, deadline)

        stop = threading.Event()
        failures: list[str] = []
        seen: dict[int, set[str]] = {p: set() for p in ports}
        counts = {p: 0 for p in ports}
        lock = threading.Lock()

        def client(port: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            while not stop.is_set():
                try:
                    status, doc = _request(conn, "POST", "/api/knowledge/search", {"query": "Petrichor", "limit": 5})
                except Exception as exc:  # noqa: BLE001 - any failure fails the test
                    with lock:
                        failures.append(f"{port}: {type(exc).__name__}: {exc}")
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    continue
                with lock:
                    counts[port] += 1
                    if status != 200 or not doc.get("candidates"):
                        failures.append(f"{port}: HTTP {status}: {str(doc)[:200]}")
                    else:
                        seen[port].add(doc.get("snapshot_version"))

        threads = [threading.Thread(target=client, args=(p,)) for p in ports]
        for t in threads:
            t.start()
        time.sleep(1.0)
        second = stage_clone(built_corpus.data_dir, tmp_path / "stage", salt="second")
        publish_remote(store, tmp_path / "stage", second, store.read_pointer())
        deadline = time.time() + 120
        for port, proc in zip(ports, procs):
            _wait_for(port, second.version, proc, deadline)
        time.sleep(1.0)
        stop.set()
        for t in threads:
            t.join(60)

        assert failures == [], failures[:5]
        for port in ports:
            assert seen[port] == {first.version, second.version}, (port, seen[port], counts[port])
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
