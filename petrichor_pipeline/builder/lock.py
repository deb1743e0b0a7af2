"""One build per data folder: an OS advisory lock on `<data>/.build.lock`, held from the corpus scan to the
publish.

Two builds on one folder would overwrite each other's warehouse files between their bucket and publish runs,
and a snapshot could then mix two corpora. The lock is `fcntl.flock` on an open file, so the kernel drops it
when the holding process ends in any way (exit, crash, SIGKILL): there is no stale lock to clean up after a
crash. The file itself stays (removing it would let two builds lock two different files of the same name);
it names its last holder (pid, host, start time) for the message a refused build prints.

A second build waits for the lock up to `wait_s` seconds (`petrichor build --wait`, default 0: it exits at
once), then fails with `BuildLocked`, naming the holder. Recovery when a build is reported as holding the
lock: the holder is alive (see the pid on that host); stop it or wait. On a network file system whose lock
server lost a dead client, the lock is freed when the server's lease expires.

The lock covers one machine's data folder. Builds on other machines that publish to one object store are
serialised by the store's conditional write of `CURRENT` instead (`object_store`).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from petrichor_core.contract.manifest import utc_now_iso

LOCK_FILE = ".build.lock"
POLL_S = 0.2


class BuildLocked(RuntimeError):
    """Another build holds the data folder's lock and did not release it within the wait."""

    def __init__(self, path: Path, holder: dict, waited_s: float) -> None:
        self.path, self.holder, self.waited_s = path, holder, waited_s
        who = f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started_at')}" if holder else "another process"
        super().__init__(
            f"another build is running on this data folder ({who}); waited {waited_s:.0f} s for {path}. "
            "Nothing was written; retry when it finishes, or pass `--wait SECONDS`."
        )


@dataclass(frozen=True)
class LockHolder:
    pid: int
    host: str
    started_at: str


def _holder(fd: int) -> dict:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return json.loads(os.read(fd, 4096).decode("utf-8") or "{}")
    except (OSError, ValueError):
        return {}


@contextmanager
def build_lock(data_dir: Path, wait_s: float = 0.0) -> Iterator[LockHolder]:
    """Hold the data folder's build lock for the block; raise `BuildLocked` after `wait_s` seconds without it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by the build's step processes
    try:
        started = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - started
                if waited >= wait_s:
                    raise BuildLocked(path, _holder(fd), waited) from None
                time.sleep(min(POLL_S, max(wait_s - waited, 0.01)))
        me = LockHolder(os.getpid(), socket.gethostname(), utc_now_iso())
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me.__dict__).encode("utf-8"), 0)
        try:
            yield me
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
