"""The Dagster UI, checked in a browser: `dagster dev` from workspace.yaml shows the asset graph, then every
process it started is gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser.conftest import screenshot_path
from tests.conftest import CORPUS, EMBED_CACHE, REPO
from tests.serving.live import free_port

pytestmark = [pytest.mark.slow, pytest.mark.browser]

DAGSTER = str(Path(sys.executable).parent / "dagster")
ASSETS = (
    "articles",
    "chunks",
    "questions",
    "wiki_candidates",
    "chunk_vectors",
    "question_vectors",
    "chunk_windows",
    "window_vectors",
    "page_index",
    "wiki_pages",
    "snapshot",
)


def _group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes in the process group `pgid`."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) ": state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _graphql(port: int, query: str) -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=5) as res:
        return json.loads(res.read())["data"]


def _wait_for_empty_group(pgid: int, seconds: float) -> None:
    deadline = time.time() + seconds
    while _group_members(pgid) and time.time() < deadline:
        time.sleep(0.5)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the whole group (what a user's Ctrl-C does), then SIGKILL to any straggler. A killed process
    lingers until the kernel has torn it down, so the group is polled after each signal, not read once."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    _wait_for_empty_group(proc.pid, 30)
    if _group_members(proc.pid):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # the last member left between the look and the kill
            pass
        _wait_for_empty_group(proc.pid, 30)
    proc.wait(timeout=10)


def test_dagster_dev_shows_the_asset_graph_and_leaves_nothing_running(page, tmp_path):
    home = tmp_path / "dagster_home"  # absolute: pytest's tmp path
    home.mkdir()
    (home / "dagster.yaml").write_text((REPO / "dagster_home" / "dagster.yaml").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETRICHOR_")}
    env.update(DAGSTER_HOME=str(home), PETRICHOR_DATA=str(tmp_path / "data"), PETRICHOR_CORPUS=str(CORPUS), PETRICHOR_EMBED_CACHE=str(EMBED_CACHE))
    port = free_port()
    proc = subprocess.Popen(
        [DAGSTER, "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the webserver and the code server die together
    )
    try:
        deadline, groups = time.time() + 180, None
        while time.time() < deadline and not groups:
            time.sleep(1)
            try:
                nodes = _graphql(port, "{ assetNodes { assetKey { path } groupName } }")["assetNodes"]
                groups = sorted({n["groupName"] for n in nodes})
            except (OSError, KeyError, TypeError, ValueError):
                continue
        assert groups, "dagster dev did not answer"
        assert set(ASSETS) <= {n["assetKey"]["path"][-1] for n in nodes}  # the code server loaded every asset
        page.set_viewport_size({"width": 1600, "height": 900})
        page.goto(f"http://127.0.0.1:{port}/asset-groups")  # the global asset lineage
        page.get_by_role("button", name="Skip").click()  # the first-visit community dialog
        page.get_by_text("publish", exact=True).first.wait_for(state="visible")
        page.keyboard.press("Alt+KeyE")  # the graph's own shortcut: expand every asset group
        zoom_out = page.locator('button:has([aria-label="zoom_out"])').first
        for _ in range(2):  # the expanded graph (every step drawn from `corpus`) is taller than the view
            zoom_out.click()
            page.wait_for_timeout(300)
        for name in ASSETS:
            page.get_by_text(name, exact=True).first.wait_for(state="visible")
        page.wait_for_timeout(1000)  # the layout settles its zoom-to-fit
        page.screenshot(path=str(screenshot_path(tmp_path, "dagster-asset-graph.png")))
    finally:
        _stop(proc)
    assert _group_members(proc.pid) == [], "a process started by dagster dev survived"
