"""Concurrent clients against `petrichor serve` (uvicorn, a subprocess on 127.0.0.1) while snapshots are
published: no request fails and every response is exactly one snapshot's answer.

The full run (16 clients, 60 s, a publish every 5 s) is behind the `load` marker:
`python -m pytest -n 0 -m load tests/integrity/test_load_swaps.py -s`; the short run is in the slow suite.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from petrichor_core.contract.current import collect_garbage, publish
from petrichor_core.contract.manifest import MANIFEST_FILE, Manifest, new_version
from tests.conftest import EMBED_CACHE, REPO, run_cli_build
from tests.integrity.helpers import copy_built, current, edit_article

NOTE = "The swap test addendum mentions a heron named Quillon."
QUERIES = ["heron named Quillon", "snapshot CURRENT retention"]


@pytest.fixture(scope="module")
def two_snapshots(built_corpus, tmp_path_factory):
    """A data dir holding two really different snapshots (before and after an edit), kept aside as bases."""
    root = tmp_path_factory.mktemp("swaps")
    data, corpus, home = copy_built(built_corpus, root)
    a = current(data)
    edit_article(corpus, note=NOTE)
    assert run_cli_build(data, corpus, home)["published"]
    b = current(data)
    bases = root / "bases"
    for v in (a, b):
        shutil.copytree(data / "snapshots" / v, bases / v)
    return data, bases, (a, b)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(conn: http.client.HTTPConnection, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers={"content-type": "application/json"})
    res = conn.getresponse()
    return res.status, json.loads(res.read())


def _publish_clone(data: Path, bases: Path, base: str) -> str:
    """Publish a copy of a base snapshot under a new version, exactly as a build publishes (manifest, CURRENT, GC)."""
    snaps = data / "snapshots"
    version = new_version(salt=base)
    shutil.copytree(bases / base, snaps / version)
    manifest = Manifest.from_json((snaps / version / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest.version, manifest.parent_version = version, base
    publish(snaps, manifest)
    collect_garbage(snaps, keep=3)
    return version


def _answer_key(doc: dict) -> list:
    return [(c.get("chunk_id"), c.get("page_key"), c.get("node_key"), c["title"]) for c in doc["candidates"]]


def run_swaps(data: Path, bases: Path, base_versions: tuple[str, str], *, clients: int, seconds: float, every: float) -> dict:
    port = _free_port()
    env = {**os.environ, "PETRICHOR_DATA": str(data), "PETRICHOR_EMBED_CACHE": str(EMBED_CACHE), "PETRICHOR_RELOAD_INTERVAL": "0.5"}
    for name in ("PETRICHOR_LLM_BASE_URL", "PETRICHOR_EMBED_BASE_URL", "PETRICHOR_API_KEYS"):
        env.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "petrichor.cli", "serve", "--port", str(port)], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base_of: dict[str, str] = {}
    try:
        conn = None
        deadline = time.time() + 120
        expected: dict[str, dict[str, list]] = {}
        for base in base_versions:  # each base's answers, read from the server itself
            v = _publish_clone(data, bases, base)
            base_of[v] = base
            while True:
                try:
                    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                    status, doc = _get(conn, "GET", "/healthz")
                    if status == 200 and doc["snapshot_version"] == v:
                        break
                except OSError:
                    conn = None
                assert time.time() < deadline and proc.poll() is None, "the server did not come up"
                time.sleep(0.2)
            expected[base] = {q: _answer_key(_get(conn, "POST", "/api/knowledge/search", {"query": q, "limit": 5})[1]) for q in QUERIES}
        assert expected[base_versions[0]] != expected[base_versions[1]], "the two bases must answer differently"

        stop = threading.Event()
        latencies: list[float] = []
        failures: list[str] = []
        seen: set[str] = set()
        lock = threading.Lock()

        def client(i: int) -> None:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            n = 0
            while not stop.is_set():
                q = QUERIES[(i + n) % len(QUERIES)]
                n += 1
                started = time.perf_counter()
                try:
                    status, doc = _get(c, "POST", "/api/knowledge/search", {"query": q, "limit": 5})
                except Exception as exc:  # noqa: BLE001 - any failure fails the run
                    with lock:
                        failures.append(f"{type(exc).__name__}: {exc}")
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    continue
                elapsed = time.perf_counter() - started
                with lock:
                    latencies.append(elapsed)
                    version = doc.get("snapshot_version")
                    if status != 200:
                        failures.append(f"HTTP {status}: {doc}")
                    elif version not in base_of:
                        failures.append(f"unknown snapshot {version}")
                    elif _answer_key(doc) != expected[base_of[version]][q]:
                        failures.append(f"{version}: answer differs from its snapshot's ({q})")
                    else:
                        seen.add(version)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        started, published = time.time(), 0
        while time.time() - started < seconds:
            time.sleep(every)
            v = _publish_clone(data, bases, base_versions[published % 2])
            base_of[v] = base_versions[published % 2]
            published += 1
        stop.set()
        for t in threads:
            t.join(timeout=90)
        latencies.sort()
        report = {
            "requests": len(latencies),
            "failures": failures,
            "published": published,
            "versions_served": len(seen),
            "p50_ms": round(1000 * statistics.median(latencies), 1) if latencies else None,
            "p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 1) if latencies else None,
        }
        print(
            f"\nload during swaps: {clients} clients, {seconds:.0f} s, a publish every {every:.0f} s: {json.dumps({k: v for k, v in report.items() if k != 'failures'})}"
        )
        return report
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _check(report: dict) -> None:
    assert report["failures"] == [], report["failures"][:5]
    assert report["requests"] > 0 and report["versions_served"] >= 2, report


@pytest.mark.slow
def test_short_load_during_swaps(two_snapshots):
    data, bases, versions = two_snapshots
    _check(run_swaps(data, bases, versions, clients=4, seconds=10, every=2))


@pytest.mark.load
def test_load_during_swaps(two_snapshots):
    data, bases, versions = two_snapshots
    _check(run_swaps(data, bases, versions, clients=16, seconds=60, every=5))
