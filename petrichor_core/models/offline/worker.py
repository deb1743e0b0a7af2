"""The offline model computing in a process of its own while a build runs its steps in the build's process.

The offline model's Chinese analysis needs jieba's dictionary, word tags and IDF table: about 0.7 s to load
in each process, where a build that edits a few articles takes a few seconds. A build starts one worker
process as it starts (`offline_worker`); the worker loads the tables on another core while the build scans,
plans and runs its first steps, and then answers the build's offline-model calls that analyze words
(`run`), the way a local model server would. The operations are the same functions, so the answers are the
same. Once the plan is known the build keeps the worker only for a bucket run in its own process with
Chinese text to build (`WorkerLease.keep_for`), and stops it otherwise.

No worker is started on a single core (it would only compete with the build), nor in a process that has
loaded jieba already (a long-lived one gains nothing). A worker that dies (killed, out of memory) is
dropped and the calls are answered in the calling process.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any

log = logging.getLogger(__name__)


def _questions(chunks: list[Any]) -> dict[str, Any]:
    from petrichor_core.models.offline.questions import chunk_questions

    return {"questions": {c.key: chunk_questions(c) for c in chunks}}


def _candidates(req: Any) -> dict[str, Any]:
    from petrichor_core.models.offline.candidates import extract_candidates

    return extract_candidates(req)


def _catalog(candidates: list[dict[str, Any]], existing_folders: list[str]) -> dict[str, Any]:
    from petrichor_core.models.offline.catalog import plan_catalog

    return plan_catalog(candidates, existing_folders)


def _pages(req: Any) -> dict[str, Any]:
    from petrichor_core.models.offline.pages import generate_pages

    return generate_pages(req)


OPERATIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "questions": _questions,
    "candidates": _candidates,
    "catalog": _catalog,
    "pages": _pages,
}
"""The offline model's operations that analyze words (`offline.terms`, on jieba's tables for Chinese), by
name: what `OfflineChatModel` computes here or in the worker. Tree summaries read no tables and are
always computed in the calling process."""


class _WorkerGone(Exception):
    """The pipe to the worker broke: it died or was stopped."""


def _serve(conn: Connection) -> None:
    """The worker: load every table the Chinese analysis reads, then answer requests until the pipe closes.
    An operation's exception goes back to be raised in the caller, as it would be raised in-process."""
    from petrichor_core.models.offline import candidates, catalog, pages, questions  # noqa: F401
    from petrichor_core.text.lang import idf_table, init_posseg

    init_posseg()
    idf_table()
    while True:
        try:
            name, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[bool, Any] = (True, OPERATIONS[name](*args))
        except Exception as exc:  # noqa: BLE001 - raised again in the caller
            reply = (False, exc)
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return
        except Exception:  # noqa: BLE001 - an exception pickle cannot carry
            conn.send((False, RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}")))


class _Worker:
    """One worker process and the pipe to it; one request in flight at a time."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no threads or locks of the build's inherited
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), name="petrichor-offline-model", daemon=True)
        self.process.start()
        child.close()
        self.lock = threading.Lock()

    def call(self, name: str, args: tuple[Any, ...]) -> dict[str, Any]:
        with self.lock:
            try:
                self.conn.send((name, args))
                ok, value = self.conn.recv()
            except (EOFError, OSError) as exc:
                raise _WorkerGone(str(exc) or type(exc).__name__) from exc
        if not ok:
            raise value
        return value

    def stop(self) -> None:
        self.process.terminate()
        self.process.join(5)
        self.conn.close()


_lock = threading.Lock()
_worker: _Worker | None = None


def run(name: str, *args: Any) -> dict[str, Any]:
    """The operation `name` on `args`: in the build's worker process while one runs, else here."""
    worker = _worker
    if worker is not None:
        try:
            return worker.call(name, args)
        except _WorkerGone as exc:
            if _clear(worker):
                log.warning("the offline model's worker process stopped (%s); computing in the build's process", exc)
    return OPERATIONS[name](*args)


def _clear(worker: _Worker) -> bool:
    global _worker
    with _lock:
        if _worker is not worker:
            return False
        _worker = None
    worker.stop()
    return True


class WorkerLease:
    """A build's hold on the worker it started (none where none was started)."""

    def __init__(self, worker: _Worker | None) -> None:
        self.worker = worker

    @property
    def running(self) -> bool:
        return self.worker is not None and _worker is self.worker

    def keep_for(self, texts: Sequence[str] | None) -> bool:
        """Keep the worker for a bucket run in this process that sends it `texts` (None: a whole corpus),
        where they hold Chinese; stop it otherwise. Returns whether it runs on."""
        from petrichor_core.text.lang import has_cjk

        if texts is not None and not any(has_cjk(t) for t in texts):
            self.stop()
        return self.running

    def stop(self) -> None:
        if self.worker is not None:
            _clear(self.worker)
            self.worker = None


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def offline_worker() -> Iterator[WorkerLease]:
    """Start the worker for the block, where it can help: two cores or more, jieba not loaded in this process,
    no other block's worker running. The block stops it early with the lease (`keep_for`, `stop`); its end
    stops it in any case."""
    global _worker
    from petrichor_core.text.lang import jieba_loaded

    worker = None
    with _lock:
        if _worker is None and _cores() >= 2 and not jieba_loaded():
            try:
                worker = _worker = _Worker()
            except Exception as exc:  # noqa: BLE001 - no process for it (limits, no spawn): compute here
                log.warning("the offline model's worker process did not start (%s); computing in the build's process", exc)
    lease = WorkerLease(worker)
    try:
        yield lease
    finally:
        lease.stop()
