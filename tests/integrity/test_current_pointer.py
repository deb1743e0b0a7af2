"""`CURRENT` is read only as a small regular file that names a snapshot folder: a symbolic link (to a file
outside), a FIFO, a directory, an oversized file, a path or bytes that are not text are refused without being
followed, blocked on or echoed; serving falls back and says why, and a build replaces the entry."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from petrichor_core.contract.current import CURRENT_FILE, point_current, read_current
from petrichor_serving.app import create_app
from petrichor_serving.services import Services, ServingSettings
from petrichor_serving.snapshot import SnapshotStore

SECRET = "root:x:0:0:a-line-only-the-outside-file-holds"


def _outside(tmp: Path) -> Path:
    target = tmp / "outside" / "passwd"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(SECRET + "\n", encoding="utf-8")
    return target


POINTERS: dict[str, tuple[Callable[[Path, Path], Any], str]] = {
    "symlink out": (lambda cur, tmp: os.symlink(_outside(tmp), cur), "symbolic link"),
    "symlink to a version file": (
        lambda cur, tmp: (cur.with_name("v.txt").write_text("v1\n"), os.symlink(cur.with_name("v.txt"), cur)),
        "symbolic link",
    ),
    "fifo": (lambda cur, tmp: os.mkfifo(cur), "FIFO"),
    "directory": (lambda cur, tmp: cur.mkdir(), "directory"),
    "oversized": (lambda cur, tmp: cur.write_text((SECRET + "\n") * 10, encoding="utf-8"), "larger than"),
    "a path": (lambda cur, tmp: cur.write_text("../outside/" + SECRET.replace(":", "") + "\n", encoding="utf-8"), "snapshot folder"),
    "not text": (lambda cur, tmp: cur.write_bytes(b"\xff\xfe" + SECRET.encode()), "UTF-8"),
}


def _within(seconds: float, work: Callable[[], Any]) -> Any:
    """`work()`'s result, failing (instead of hanging the suite) when it blocks past `seconds`."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"blocked for more than {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def _snapshots(tmp_path: Path, pointer: str) -> Path:
    snaps = tmp_path / "data" / "snapshots"
    snaps.mkdir(parents=True)
    POINTERS[pointer][0](snaps / CURRENT_FILE, tmp_path)
    return snaps


@pytest.mark.parametrize("pointer", list(POINTERS))
def test_a_current_that_is_not_a_small_regular_file_naming_a_folder_reads_as_no_pointer_at_once(tmp_path, pointer):
    snaps = _snapshots(tmp_path, pointer)
    assert _within(5, lambda: read_current(snaps)) is None


@pytest.mark.parametrize("pointer", list(POINTERS))
def test_healthz_and_the_snapshot_status_say_why_and_echo_nothing_of_the_file(tmp_path, pointer):
    snaps = _snapshots(tmp_path, pointer)
    services = Services(settings=ServingSettings(data_dir=snaps.parent), store=SnapshotStore(snaps.parent), keys=None, chat=None, embedder=None)

    def ask() -> tuple[Any, Any]:
        with TestClient(create_app(services, watch=False)) as client:  # start-up reads CURRENT
            return client.get("/healthz"), client.get("/api/snapshot")

    health, status = _within(10, ask)
    assert health.status_code == 503 and health.json()["status"] == "degraded"
    assert POINTERS[pointer][1] in health.json()["reason"]
    assert status.json()["pointer"] is None and status.json()["refused"]["version"] is None
    for body in (health.text, status.text):
        assert "a-line-only" not in body and "outside" not in body and str(tmp_path) not in body


@pytest.mark.parametrize("pointer", ["symlink out", "fifo"])
def test_publishing_replaces_a_link_or_fifo_at_current_and_never_writes_through_it(tmp_path, pointer):
    snaps = _snapshots(tmp_path, pointer)
    _within(5, lambda: point_current(snaps, "v1"))
    assert not (snaps / CURRENT_FILE).is_symlink() and (snaps / CURRENT_FILE).is_file()
    assert read_current(snaps) == "v1"
    if pointer == "symlink out":
        assert (tmp_path / "outside" / "passwd").read_text(encoding="utf-8") == SECRET + "\n"


def test_publishing_refuses_a_directory_at_current_and_leaves_what_it_holds(tmp_path):
    snaps = _snapshots(tmp_path, "directory")
    (snaps / CURRENT_FILE / "notes.txt").write_text("kept", encoding="utf-8")
    with pytest.raises(IsADirectoryError, match="not the CURRENT pointer"):
        point_current(snaps, "v1")
    assert (snaps / CURRENT_FILE / "notes.txt").read_text(encoding="utf-8") == "kept"


@pytest.mark.slow  # builds a corpus
def test_a_fifo_at_current_blocks_neither_start_up_nor_the_watcher_nor_the_next_build(tmp_path):
    """Serving starts on the retained snapshot and says why; the build publishes over the FIFO; the watcher
    running all along picks the new snapshot up and health is 200 again."""
    from tests.pipeline.tiny_corpus import build, write_corpus

    data, corpus, home = tmp_path / "data", write_corpus(tmp_path / "corpus"), tmp_path / "home"
    first = build(data, corpus, home)
    assert first["_exit_code"] == 0, first
    current = data / "snapshots" / CURRENT_FILE
    current.unlink()
    os.mkfifo(current)

    store = SnapshotStore(data)
    assert _within(30, store.refresh) and store.current.version == first["snapshot_version"]
    health = store.health()
    assert not health.ok and "FIFO" in health.reason and health.snapshot_version == first["snapshot_version"]
    store.watch(0.05)
    try:
        (corpus / "kb" / "ports.md").write_text("# Ports\n\nThe service listens on port 9000 now.\n", encoding="utf-8")
        second = _within(120, lambda: build(data, corpus, home))
        assert second["_exit_code"] == 0 and second["published"], second
        assert current.is_file() and read_current(data / "snapshots") == second["snapshot_version"]
        _within(30, lambda: _until(lambda: store.health().ok))
        assert store.current.version == second["snapshot_version"]
    finally:
        store.stop()


def _until(done: Callable[[], bool]) -> None:
    while not done():
        threading.Event().wait(0.05)
