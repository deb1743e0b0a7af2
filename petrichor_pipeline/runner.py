"""`petrichor build`: materialize the stale buckets and publish, through Dagster's own APIs.

The corpus is scanned once and observed (its bucket data versions, on the instance); the build's runs work
from that scan (`builder.scan_handoff`) and with the build's settings, read once by the caller and passed
as typed resource config (`resources.RunSettings`). One Dagster run of the bucket assets covers every stale bucket (the
range from the first to the last; every step skips the fresh buckets inside it, `staleness.STALE_TAG`), on
the multiprocess executor or in process, then one run of the unpartitioned assets publishes.
Staleness is read back from the instance (`staleness`): a bucket is stale when its data version, the build
key or a step's code version differs from what its last materializations record, vectors are pending, or
this data folder's warehouse files are not the ones recorded.

A build holds the data folder's lock (`builder.lock`) from its scan to its publish, so a snapshot is always
one build's scan of one corpus. A failure anywhere (a full disk, the instance's database) ends in the
summary, `failed_run` and `errors`, never in a traceback, and `CURRENT` stays where it was."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from dagster import AssetCheckSeverity, execute_job, reconstructable

from petrichor_core.config import BUCKETS
from petrichor_core.contract.current import read_current, verify_snapshot
from petrichor_core.contract.manifest import read_manifest
from petrichor_core.models.providers import chat_provider
from petrichor_core.object_store import ObjectStore
from petrichor_pipeline.assets.snapshot import discard_unpublished
from petrichor_pipeline.builder import bucket_prefetch
from petrichor_pipeline.builder.context import BuildContext, StageListener, StepCount
from petrichor_pipeline.builder.instance_sqlite import held_instance_storage
from petrichor_pipeline.builder.issues import BuildWarning, FileError, clear_run_issues, read_run_issues
from petrichor_pipeline.builder.lock import build_lock
from petrichor_pipeline.builder.publish import BUCKET_SOURCES
from petrichor_pipeline.builder.publish_guard import PublishRefused, check_publish
from petrichor_pipeline.builder.run_progress import RunProgress
from petrichor_pipeline.builder.scan_handoff import SCAN_TAG, hold_scan, remove_scan, write_scan
from petrichor_pipeline.builder.steps.articles import bucket_data_version, scan_buckets
from petrichor_pipeline.definitions import bucket_build_job_def, definitions
from petrichor_pipeline.instance import build_instance
from petrichor_pipeline.jobs import asset_keys, bucket_assets, bucket_build_job, parallel_execution, publish_job
from petrichor_pipeline.resources import PetrichorResource
from petrichor_pipeline.staleness import STALE_TAG, observe_corpus, stale_buckets

log = logging.getLogger(__name__)

QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
PLANNED_AS_RANGE = "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"
"""Dagster's setting for how a run over a partition range announces what it will materialize. By default one
event per asset and bucket: a build's bucket run plans 9 assets × 16 buckets, 144 events at 6-7 ms each on
the default SQLite instance, about 1 s of every build that edits a few articles. With it set (what `petrichor
build` does unless the environment sets it otherwise), one event per asset names the range. Dagster's own
caveat: the buckets of a run that fails are then not marked failed in its UI (they show their last
materialization); what the build reports and what the next build plans come from materializations, which
do not change."""
PUBLISH_STAGE = "publish"
"""The stage `on_progress` hears once the publish run is over (the others are bucket steps)."""
PARTITION_RANGE_START = "dagster/asset_partition_range_start"
PARTITION_RANGE_END = "dagster/asset_partition_range_end"


@dataclass
class RunUsage:
    """What one Dagster run of a build spent on models (its run meter, as the assets reported it)."""

    run_id: str
    partition: str | None
    model_calls: int = 0
    calls_by_article: dict[str, int] = field(default_factory=dict)


@dataclass
class BuildSummary:
    snapshot_version: str | None = None
    published: bool = False
    articles: dict[str, int] = field(default_factory=lambda: {"total": 0, "built": 0, "skipped": 0, "failed": 0})
    materialized: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    runs: list[RunUsage] = field(default_factory=list)
    embedded_texts: int = 0
    warnings: list[BuildWarning] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0
    failed_run: str | None = None
    refused: bool = False
    """The publish guard stopped the build before its bucket run (`publish_guard`): `failed_run` says why."""
    file_seconds: dict[str, dict[str, float]] = field(default_factory=dict)
    """path -> {step: seconds} of the slowest files each bucket step reported (`steps.common.run_articles`)."""

    def costliest_files(self, limit: int = 10) -> list[dict[str, Any]]:
        """The files that cost the most seconds over all per-article steps, each with its steps' seconds."""
        ranked = sorted(self.file_seconds.items(), key=lambda item: (-sum(item[1].values()), item[0]))[:limit]
        return [{"path": path, "seconds": round(sum(steps.values()), 3), "steps": steps} for path, steps in ranked]

    @property
    def model_calls(self) -> int:
        """Model calls of the whole build: each run meters itself, so the build is the sum of its runs."""
        return sum(run.model_calls for run in self.runs)

    @property
    def ok(self) -> bool:
        return self.failed_run is None

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot_version": self.snapshot_version,
            "published": self.published,
            "articles": self.articles,
            "partitions": {"materialized": self.materialized, "skipped": self.skipped},
            "model_calls": self.model_calls,
            "embedded_texts": self.embedded_texts,
            "warnings": [str(w) for w in self.warnings],
            "warning_details": [w.to_json() for w in self.warnings],
            "errors": [e.to_json() for e in self.errors],
            "stages": self.stages,
            "seconds": round(self.seconds, 3),
            "failed_run": self.failed_run,
            "costliest_files": self.costliest_files(),
        }


@dataclass(frozen=True)
class Plan:
    """What a build's bucket run covers: the stale buckets, widened to one contiguous range for a single run
    (the fresh ones inside it are skipped by every step, `staleness.STALE_TAG`), and the buckets left alone."""

    stale: list[str]
    covered: list[str]
    left: list[str]


def plan(ctx: BuildContext, instance: Any, versions: dict[str, str]) -> Plan:
    """The stale buckets as the instance records them, and the range a single run over them covers."""
    stale = stale_buckets(instance, bucket_assets(ctx.settings), versions, ctx.build_key(), full_rebuild=ctx.full_rebuild, warehouse=ctx.warehouse)
    if not stale:
        return Plan([], [], list(BUCKETS))
    first, last = BUCKETS.index(stale[0]), BUCKETS.index(stale[-1])
    covered = list(BUCKETS[first : last + 1])
    return Plan(stale, covered, [b for b in BUCKETS if b not in covered])


PARALLEL_MIN_ARTICLES = 200
"""Articles to (re)build from which the bucket run takes the multiprocess executor: below it, starting a
process per step costs more than the steps' work, so the run stays in this process."""


def articles_to_build(ctx: BuildContext, buckets: dict[str, Any], covered: list[str]) -> list[dict[str, Any]]:
    """The scanned articles of the covered buckets whose id and version the warehouse does not hold yet."""
    todo: list[dict[str, Any]] = []
    for bucket in covered:
        rows, _ = buckets[bucket]
        prev = ctx.warehouse.read("articles", bucket, columns=["article_id", "article_version"])
        have = set(zip(prev.column("article_id").to_pylist(), prev.column("article_version").to_pylist())) if prev is not None else set()
        todo.extend(r for r in rows if (r["article_id"], r["article_version"]) not in have)
    return todo


def runs_in_process(instance: Any, todo: list[dict[str, Any]] | None, parallel: bool | None) -> bool:
    """Whether the bucket run executes its steps in this process: unless asked, when it builds fewer than
    `PARALLEL_MIN_ARTICLES` articles (`todo`; None for a full rebuild) or the instance is ephemeral."""
    if parallel is None:
        parallel = (todo is None or len(todo) >= PARALLEL_MIN_ARTICLES) and not instance.is_ephemeral
    return not parallel


def _model_worker(ctx: BuildContext) -> AbstractContextManager[Any]:
    """The chat model's own process for this build, where its provider has one (`ChatProvider.build_worker`):
    started now, so that it is ready when the bucket run's first model call comes."""
    worker = chat_provider(ctx.settings).build_worker
    return worker() if worker is not None else nullcontext()


def _published_versions(ctx: BuildContext) -> dict[str, str] | None:
    """The bucket versions `CURRENT` was built from, or None when it is missing, would be refused by serving,
    or is not what the object store's `CURRENT` names."""
    current = read_current(ctx.settings.snapshots_dir)
    if not current:
        return None
    if ctx.settings.object_store and ObjectStore(ctx.settings.object_store).read_pointer().version != current:
        return None  # the store serves another snapshot (or none): publish what this staging folder holds
    try:
        verify_snapshot(ctx.settings.data_dir, current)
        return read_manifest(ctx.settings.snapshots_dir, current).stats.get("bucket_versions")
    except (OSError, ValueError) as exc:  # IntegrityError is a ValueError
        log.warning("CURRENT %s does not verify, republishing: %s", current, exc)
        return None


def _failure_reason(result: Any) -> str:
    """The first failed step's error (a lost race for `CURRENT` on the object store, say), for the summary."""
    for event in result.get_step_failure_events():
        error = getattr(event.event_specific_data, "error", None)
        while error is not None and error.cause is not None and "PublishConflict" not in error.cls_name:
            error = error.cause
        if error is not None:
            return f": {error.cls_name}: {error.message.strip()}"
    return ""


def _collect(ctx: BuildContext, result: Any, summary: BuildSummary, built: set[str], partition: str | None = None) -> int:
    """Fold a run's materialization metadata (figures) and issue records (every warning and failed file of
    its buckets, `issues.read_run_issues`) into the summary; returns the count of pending vectors."""
    pending = 0
    issues = read_run_issues(ctx.warehouse.root, result.run_id)
    usage = RunUsage(run_id=result.run_id, partition=partition)
    summary.runs.append(usage)
    for ev in result.get_asset_materialization_events():  # a run over a range: one per bucket, each its own figures
        mat = ev.event_specific_data.materialization
        asset = mat.asset_key.to_user_string()
        meta = {k: getattr(v, "value", v) for k, v in mat.metadata.items()}
        stage = summary.stages.setdefault(asset, {"rows": 0, "articles_built": 0, "articles_skipped": 0, "seconds": 0.0})
        for k in ("rows", "articles_built", "articles_skipped", "seconds"):
            if isinstance(meta.get(k), (int, float)):
                stage[k] = round(stage[k] + meta[k], 3)
        pending += int(meta.get("pending", 0) or 0)
        usage.model_calls += int(meta.get("model_calls", 0) or 0) + int(meta.get("model_calls_unattributed", 0) or 0)
        for aid, calls in (meta.get("model_calls_by_article") or {}).items():
            usage.calls_by_article[aid] = usage.calls_by_article.get(aid, 0) + int(calls)
        summary.embedded_texts += int(meta.get("embedded_texts", 0) or 0)
        for path, secs in (meta.get("seconds_by_file") or {}).items():
            steps = summary.file_seconds.setdefault(path, {})
            steps[asset] = round(steps.get(asset, 0.0) + float(secs), 3)
        if asset != "articles":
            built.update(meta.get("built_article_ids") or [])
    for asset in sorted(issues.warnings):  # `articles`' own: its failures are the scan's, its warnings chunks' too
        if asset != "articles":
            summary.warnings.extend(issues.warnings[asset])
            summary.errors.extend(issues.failed[asset])
    for check in result.get_asset_check_evaluations():
        if not check.passed:
            outcome = f"check {check.check_name} failed: {_check_detail(check)}"
            if check.blocking and check.severity == AssetCheckSeverity.ERROR:
                summary.errors.append(FileError("", f"blocking {outcome}; not published", check=check.check_name))
            else:
                summary.warnings.append(BuildWarning(outcome))
    return pending


def _check_detail(check: Any) -> str:
    """A failed check's description, or its metadata's non-empty figures, in one line."""
    if check.description:
        return check.description
    shown = {k: getattr(v, "value", v) for k, v in check.metadata.items()}
    return ", ".join(f"{k}={v}" for k, v in shown.items() if v not in (0, "", [], {}, None))[:300] or "no detail"


def run_build(
    ctx: BuildContext,
    *,
    instance: Any = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    on_count: Callable[[StepCount], None] | None = None,
    parallel: bool | None = None,
    lock_wait_s: float = 0.0,
) -> BuildSummary:
    """Take the data folder's build lock, plan, build the stale buckets in one run and publish.

    `parallel` runs the bucket steps on the multiprocess executor (needs a persistent instance), False in
    this process (reporting progress per bucket); None chooses: parallel on a persistent instance for a full
    rebuild or at least `PARALLEL_MIN_ARTICLES` articles to build. A build already running on the folder
    makes this one wait up to `lock_wait_s` seconds, then return a failed summary naming it (`BuildLocked`).
    `on_progress` hears each stage's finished buckets, `on_count` the long steps' running counts (of a bucket
    run in this process). A corpus the publish guard refuses stops the build before its bucket run.
    Any exception ends in the summary (`failed_run`, `errors`) rather than escaping."""
    started = time.perf_counter()
    summary = BuildSummary()
    os.environ.setdefault(PLANNED_AS_RANGE, "true")
    before = read_current(ctx.settings.snapshots_dir)
    try:
        with build_lock(ctx.settings.data_dir, lock_wait_s):
            instance = instance or build_instance()
            with held_instance_storage(instance):
                _locked_build(ctx, instance, summary, on_progress, on_count, parallel)
    except PublishRefused as exc:
        summary.failed_run, summary.refused = str(exc), True
    except Exception as exc:  # noqa: BLE001 - every failure becomes the summary's error, CURRENT untouched
        log.debug("build failed", exc_info=True)
        summary.failed_run = summary.failed_run or f"build stopped: {describe_failure(exc)}"
    summary.snapshot_version = read_current(ctx.settings.snapshots_dir)
    if summary.failed_run:
        moved = summary.snapshot_version != before
        where = ctx.settings.corpus_dir if summary.refused else ctx.settings.data_dir
        summary.errors.append(FileError(str(where), failure_advice(summary.failed_run, published=moved)))
    summary.seconds = time.perf_counter() - started
    return summary


DISK_FULL = ("No space left on device", "database or disk is full", "Disk quota exceeded", "[Errno 28]", "[Errno 122]")


def describe_failure(exc: BaseException) -> str:
    """One line for an exception: its type and message (the lock's and the publish guard's say what to do)."""
    if isinstance(exc, OSError) and exc.filename:
        return f"{type(exc).__name__}: {exc.strerror or exc} ({exc.filename})"
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


def failure_advice(failed_run: str, *, published: bool = False) -> str:
    """The summary's error for a failed build: what failed and what it means for the published snapshot."""
    kept = "CURRENT moved before the failure" if published else "nothing was published; the previous snapshot keeps serving"
    if any(sign in failed_run for sign in DISK_FULL):
        return f"the disk is full: {failed_run}; {kept}. Free space and build again."
    return f"{failed_run}; {kept}"


def _locked_build(
    ctx: BuildContext,
    instance: Any,
    summary: BuildSummary,
    on_progress: Callable[[str, int, int], None] | None,
    on_count: Callable[[StepCount], None] | None,
    parallel: bool | None,
) -> None:
    """The build proper, under the data folder's lock, beside the chat model's own process where it has one."""
    with _model_worker(ctx) as model_worker:
        _planned_build(ctx, instance, summary, on_progress, on_count, parallel, model_worker)


def _planned_build(
    ctx: BuildContext,
    instance: Any,
    summary: BuildSummary,
    on_progress: Callable[[str, int, int], None] | None,
    on_count: Callable[[StepCount], None] | None,
    parallel: bool | None,
    model_worker: Any,
) -> None:
    """Scan, guard, plan, bucket run, publish run; the model's process is kept only for a bucket run in this process."""
    done: dict[str, int] = {}

    def report(asset: str) -> None:
        done[asset] = done.get(asset, 0) + 1
        if on_progress:
            on_progress(asset, done[asset], len(stale))

    def stage_done(asset: str) -> None:
        report(asset)
        if all(done.get(source, 0) >= len(stale) for source in BUCKET_SOURCES):
            bucket_prefetch.start(ctx, scan.id())  # beside the bucket run's last steps (`bucket_prefetch`)

    clear_run_issues(ctx.warehouse.root)
    buckets = scan_buckets(ctx)
    check_publish(ctx)  # before anything is built: a refused corpus leaves the warehouse as it was
    versions = {b: bucket_data_version(rows, errs) for b, (rows, errs) in buckets.items()}
    observe_corpus(instance, versions)
    planned = plan(ctx, instance, versions)
    stale = planned.stale
    summary.skipped = planned.left
    scan = HandedScan(ctx)
    resource = PetrichorResource.for_build(ctx, StageListener(stage_done, on_count))  # the settings every run of this build sees
    todo = None if ctx.full_rebuild else articles_to_build(ctx, buckets, stale) if stale else []
    in_process = runs_in_process(instance, todo, parallel)
    if model_worker is not None:
        if stale and in_process:
            model_worker.keep_for(None if todo is None else [t for r in todo for t in (r["title"], r["content"])])
        else:
            model_worker.stop()
    try:
        built = _run_buckets(ctx, instance, resource, planned, summary, scan, in_process, stage_done, report)
        if model_worker is not None:
            model_worker.stop()  # the publish run calls no model
        _count_articles(buckets, summary, built)
        if not summary.failed_run:
            _publish(ctx, instance, resource, planned, versions, summary, built, scan, on_progress)
    finally:
        scan.remove()


@dataclass
class HandedScan:
    """The planning scan as the build's runs receive it (`scan_handoff`): held when a run first needs it,
    written only for step processes."""

    ctx: BuildContext
    scan_id: str | None = None
    written: bool = False

    def id(self) -> str:
        """The scan's id for runs in this process."""
        if self.scan_id is None:
            self.scan_id = hold_scan(self.ctx.scan())
        return self.scan_id

    def id_for_processes(self) -> str:
        """The scan's id for a run whose steps run in processes of their own, which read it from its file."""
        scan_id = self.id()
        if not self.written:
            write_scan(self.ctx.settings.data_dir, self.ctx.scan(), scan_id)
            self.written = True
        return scan_id

    def remove(self) -> None:
        bucket_prefetch.drop(self.scan_id)  # before the lock goes: its reads write the postings caches
        remove_scan(self.ctx.settings.data_dir, self.scan_id)


def _materialize_in_process(instance: Any, resource: PetrichorResource, job: str, selection: Any, tags: dict[str, str]) -> Any:
    """One run of the named `job` in this process (`selection` of its assets, None for all; a selected asset's
    checks run with it), with the build's resource; failures land in the result."""
    return (
        definitions(resource)
        .resolve_job_def(job)
        .execute_in_process(
            instance=instance,
            asset_selection=None if selection is None else asset_keys(selection),
            raise_on_error=False,
            run_config=QUIET_RUN_CONFIG,
            tags=tags,
        )
    )


def _run_buckets(
    ctx: BuildContext,
    instance: Any,
    resource: PetrichorResource,
    planned: Plan,
    summary: BuildSummary,
    scan: HandedScan,
    in_process: bool,
    stage_done: Callable[[str], None],
    report: Callable[[str], None],
) -> set[str]:
    """The one bucket run over the planned range; fills the summary's materialized buckets and stages and
    returns the ids of the articles it built. A run in this process tells `stage_done` each finished bucket
    step; a multiprocess run is followed through its event log meanwhile (`run_progress`: `report` hears its
    finished buckets, the resource's listener its counts), the buckets not heard go to `stage_done` after."""
    stale, covered = planned.stale, planned.covered
    built: set[str] = set()
    if not stale:
        return built
    steps = bucket_assets(ctx.settings)
    parallel = not in_process
    tags = {
        PARTITION_RANGE_START: covered[0],
        PARTITION_RANGE_END: covered[-1],
        STALE_TAG: ",".join(stale),
        SCAN_TAG: scan.id_for_processes() if parallel else scan.id(),
        "petrichor/trigger": "cli",
        "petrichor/full_rebuild": str(ctx.full_rebuild).lower(),
    }
    if parallel:
        run_config = {
            **QUIET_RUN_CONFIG,
            **parallel_execution(ctx.settings.build_workers or None, ctx.settings),
            "resources": resource.run_config(),  # the step processes rebuild the resource from it
        }
        heard = RunProgress(instance, {SCAN_TAG: tags[SCAN_TAG]}, stale, report, resource.progress.count)
        with (
            heard,
            execute_job(
                reconstructable(bucket_build_job_def),
                instance=instance,
                run_config=run_config,
                tags=tags,
                raise_on_error=False,
                asset_selection=asset_keys(steps),
            ) as res,
        ):
            pending = _collect(ctx, res, summary, built, ",".join(covered))
            success, run_id = res.success, res.run_id
        for asset in (a.key.to_user_string() for a in steps):
            for _ in range(len(stale) - heard.finished[asset]):
                stage_done(asset)
    else:
        res = _materialize_in_process(instance, resource, bucket_build_job.name, steps, tags)
        pending = _collect(ctx, res, summary, built, ",".join(covered))
        success, run_id = res.success, res.run_id
    if not success:
        summary.failed_run = f"buckets {covered[0]}..{covered[-1]}: run {run_id} failed{_failure_reason(res)}"
    else:
        summary.materialized = list(covered)  # Dagster records every bucket of the range
    if pending:
        log.info("%d vectors pending; their buckets stay stale for the next build", pending)
    return built


def _count_articles(buckets: dict[str, Any], summary: BuildSummary, built: set[str]) -> None:
    all_articles = [a for rows, _ in buckets.values() for a in rows]
    summary.errors = [e for _, errs in buckets.values() for e in errs] + summary.errors
    failed_ids = {e.path for e in summary.errors}
    # the id lists in run metadata are capped; the per-stage counts are not
    n_built = max([len(built)] + [s["articles_built"] for name, s in summary.stages.items() if name != "articles"])
    summary.articles = {
        "total": len(all_articles),
        "built": n_built,
        "skipped": len(all_articles) - n_built,
        "failed": len(failed_ids),
    }


def _publish(
    ctx: BuildContext,
    instance: Any,
    resource: PetrichorResource,
    planned: Plan,
    versions: dict[str, str],
    summary: BuildSummary,
    built: set[str],
    scan: HandedScan,
    on_progress: Callable[[str, int, int], None] | None,
) -> None:
    """The publish run, when a bucket was built or `CURRENT` is not what the corpus is now."""
    if planned.stale or _published_versions(ctx) != versions or ctx.full_rebuild:
        bucket_prefetch.start(ctx, scan.id())  # unless the bucket run started it
        res = _materialize_in_process(instance, resource, publish_job.name, None, {"petrichor/trigger": "cli", SCAN_TAG: scan.id()})
        _collect(ctx, res, summary, built)
        if not res.success:
            summary.failed_run = f"publish: run {res.run_id} failed{_failure_reason(res)}"
            discard_unpublished(instance, res.run_id, ctx.settings.snapshots_dir)
        else:
            summary.published = True
        if on_progress:
            on_progress(PUBLISH_STAGE, 1, 1)
