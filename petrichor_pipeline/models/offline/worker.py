"""The offline model computing in a process of its own while a build runs its steps in the build's process.

The offline model's Chinese analysis needs jieba's dictionary, word tags and IDF table: about 0.7 s to load
in each process, where a build that edits a few articles takes a few seconds. A build whose bucket run stays
in its own process (`runner`) starts one worker process once its plan shows Chinese articles to build; the
worker loads the tables on another core while the build starts its bucket run and runs the first steps, and
then answers the build's offline-model calls that analyze words (`run`), the way a local model server would.
The operations are the same functions, so the answers are the same.

A process that has loaded jieba already (a long-lived one) gains nothing from a worker and starts none; a
broken worker (killed, out of memory) is dropped and the calls are answered in the calling process.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

log = logging.getLogger(__name__)

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def _questions(chunks: list[Any]) -> dict[str, Any]:
    from petrichor_pipeline.models.offline.questions import chunk_questions

    return {"questions": {c.key: chunk_questions(c) for c in chunks}}


def _candidates(req: Any) -> dict[str, Any]:
    from petrichor_pipeline.models.offline.candidates import extract_candidates

    return extract_candidates(req)


def _catalog(candidates: list[dict[str, Any]], existing_folders: list[str]) -> dict[str, Any]:
    from petrichor_pipeline.models.offline.catalog import plan_catalog

    return plan_catalog(candidates, existing_folders)


def _pages(req: Any) -> dict[str, Any]:
    from petrichor_pipeline.models.offline.pages import generate_pages

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


def _call(name: str, *args: Any) -> dict[str, Any]:
    return OPERATIONS[name](*args)


def _warm() -> None:
    """The worker's start: every table the Chinese analysis reads, before the first call asks for them."""
    from petrichor_pipeline.models.offline import candidates, catalog, pages, questions  # noqa: F401
    from petrichor_pipeline.text.lang import idf_table, init_posseg

    init_posseg()
    idf_table()


def _started() -> None:
    """A task that returns once the worker has started: submitting it makes the pool start its process now."""


def run(name: str, *args: Any) -> dict[str, Any]:
    """The operation `name` on `args`: in the build's worker process while one runs, else here."""
    pool = _pool
    if pool is not None:
        try:
            return pool.submit(_call, name, *args).result()
        except BrokenProcessPool as exc:
            _drop(pool, exc)
    return _call(name, *args)


def _drop(pool: ProcessPoolExecutor, exc: BaseException) -> None:
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
            log.warning("the offline model's worker process stopped (%s); computing in the build's process", exc)


@contextmanager
def offline_worker(texts: Sequence[str] | None = None) -> Iterator[bool]:
    """Within the block, this process's offline model computes in one worker process, started now; yields
    whether it started one: only for `texts` with Chinese in them (None: a whole corpus), which is what
    needs jieba's tables, and not where this process has loaded them already or another block is open."""
    global _pool
    from petrichor_pipeline.text.lang import has_cjk, jieba_loaded

    chinese = texts is None or any(has_cjk(t) for t in texts)
    with _lock:
        if _pool is not None or not chinese or jieba_loaded():
            pool = None
        else:
            pool = _pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_warm)
    if pool is None:
        yield False
        return
    try:
        try:
            pool.submit(_started)
        except Exception as exc:  # noqa: BLE001 - no process for it (limits, no spawn): compute here
            _drop(pool, exc)
        yield _pool is pool
    finally:
        with _lock:
            if _pool is pool:
                _pool = None
        pool.shutdown(wait=False, cancel_futures=True)
