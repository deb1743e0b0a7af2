"""The buckets' half of a snapshot, read while the wiki is still aggregating.

A build's publish run aggregates the wiki (`wiki_pages`), then stages the snapshot, whose first half (every
bucket's tables and the article indexes' merged postings, `publish.read_buckets`) depends on a few bucket
steps alone (`publish.BUCKET_SOURCES`). The steps that follow them (the wiki's candidates, with the offline
model) and the aggregation hold the GIL most of the time; the reads and merges are Arrow and numpy, which
hold it little. So `petrichor build` starts that half on threads of its own as soon as its bucket run is past
those steps (or before its publish run, at the latest) and hands it to the publish run's `snapshot` step
under the build's scan id (the run's `SCAN_TAG`, as `scan_handoff` hands the scan). A run without it (the
UI, a sensor) reads the buckets itself.

The reads rewrite the postings cache of buckets whose articles changed (`lexical_parts`), so they never
outlast the build's lock: the step that takes them waits for them, and the build waits for any no step took
(`drop`)."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.publish import PUBLISH_THREADS, BucketReads, read_buckets


@dataclass
class _Started:
    future: Future[BucketReads] | None
    """None once the `snapshot` step took it: the reads (every bucket's tables) are then the step's to free."""


_HELD: dict[str, _Started] = {}
_LOCK = threading.Lock()


def start(ctx: BuildContext, scan_id: str) -> None:
    """Read the buckets of `ctx`'s warehouse on threads of their own, for the run tagged `scan_id`; nothing
    when they were started already (a bucket step's thread may ask while another does)."""

    def run() -> BucketReads:
        with ThreadPoolExecutor(max_workers=PUBLISH_THREADS) as pool:
            reads = read_buckets(ctx, pool)
            for merge in reads.merges.values():
                merge.result()
        return reads

    with _LOCK:
        if scan_id in _HELD:
            return
        runner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bucket-prefetch")
        _HELD[scan_id] = _Started(runner.submit(run))
        runner.shutdown(wait=False)  # its thread ends with its one task


def take(scan_id: str | None) -> Future[BucketReads] | None:
    """The reads started for the run tagged `scan_id`, once: the taker waits for them (`publish.stage_snapshot`
    does, failed or not), and holding them no longer keeps every bucket's tables in memory through the checks."""
    with _LOCK:
        started = _HELD.get(scan_id) if scan_id else None
        if started is None:
            return None
        future, started.future = started.future, None
    return future


def drop(scan_id: str | None) -> None:
    """Forget the reads started under `scan_id`, once any no step took are finished (failed or not)."""
    with _LOCK:
        started = _HELD.pop(scan_id, None) if scan_id else None
    if started is not None and started.future is not None:
        started.future.exception()  # waits; a failure is the snapshot step's to report, and it never ran
