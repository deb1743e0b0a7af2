"""A real `petrichor serve` on 127.0.0.1 over the built bundled corpus, with the two-tenant key file.

Shared by the client tests (the official `openai` client, the MCP SDK client) and the streaming benchmark.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
KEYS = {"acme-key": ("acme", "*"), "globex-key": ("globex", "*")}
"""Two tenants of the bundled corpus: acme holds petrichor-zh, globex petrichor-en."""


@dataclass(frozen=True)
class LiveServer:
    url: str
    env: dict[str, str]
    """The environment the server runs with (the same paths and key file serve `petrichor mcp`)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def app_in_thread(app: Any, *, timeout_s: float = 60) -> Iterator[str]:
    """`app` on uvicorn in a thread of this process, on a free 127.0.0.1 port: yields its base URL, stops it."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def serving_env(data_dir: Path, corpus_dir: Path, embed_cache: Path, workdir: Path, *, keys: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETRICHOR_")}
    env.update(PETRICHOR_DATA=str(data_dir), PETRICHOR_CORPUS=str(corpus_dir), PETRICHOR_EMBED_CACHE=str(embed_cache), PYTHONPATH=str(REPO))
    if keys:
        key_file = workdir / "keys.json"
        entries = [{"sha256": hashlib.sha256(k.encode()).hexdigest(), "tenant": t, "kbs": kbs, "name": t} for k, (t, kbs) in KEYS.items()]
        key_file.write_text(json.dumps({"keys": entries}), encoding="utf-8")
        env["PETRICHOR_API_KEYS"] = str(key_file)
    return env


@contextmanager
def petrichor_serve(env: dict[str, str], *, timeout_s: float = 120, args: tuple[str, ...] = ()) -> Iterator[LiveServer]:
    """`petrichor serve [args]` in its own process group until the block ends; waits for `/healthz` to name a snapshot."""
    port = free_port()
    log = open(Path(env["PETRICHOR_DATA"]).parent / f"serve-{port}.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "petrichor.cli", "serve", "--host", "127.0.0.1", "--port", str(port), *args],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"petrichor serve exited with {proc.returncode}: see {log.name}")
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as res:
                    if json.loads(res.read())["snapshot_version"]:
                        break
            except (OSError, ValueError, KeyError):
                pass
            if time.time() > deadline:
                raise RuntimeError(f"petrichor serve did not answer in {timeout_s:.0f} s: see {log.name}")
            time.sleep(0.3)
        yield LiveServer(url=url, env=env)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
