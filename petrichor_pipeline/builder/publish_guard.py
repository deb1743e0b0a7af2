"""The publish guard: a build never silently replaces what is served with little or nothing.

A corpus folder that does not exist (a typo in `PETRICHOR_CORPUS`) or holds no articles, and a corpus that
would drop more than half of the live snapshot's articles, are refused before anything is published, unless
the build says the change is intended (`config.PublishOptions`: `petrichor build --allow-empty` or
`--allow-shrink`, or the same fields of the `petrichor` resource's run config). `petrichor build` asks before
its bucket run, so a refused build leaves the warehouse as well as `CURRENT` as they were; in the runs Dagster
starts (schedules, sensors, the UI) the `articles` step refuses a missing or empty corpus before it touches a
bucket, and the `snapshot` asset asks again before it stages.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from petrichor_core.config import PublishOptions, Settings
from petrichor_core.contract.current import read_current
from petrichor_core.contract.manifest import MANIFEST_FILE, Manifest, read_manifest
from petrichor_core.object_store import ObjectStore
from petrichor_pipeline.builder.context import BuildContext

log = logging.getLogger(__name__)

MAX_DROPPED_SHARE = 0.5
"""A publish may drop at most this share of the live snapshot's articles unless it allows shrinking."""


class PublishRefused(ValueError):
    """A publish the guard stopped; the message is one line naming the corpus folder and the switch to pass."""

    def __init__(self, message: str, corpus_dir: Path):
        super().__init__(message)
        self.corpus_dir = corpus_dir


@dataclass(frozen=True)
class LiveSnapshot:
    """The snapshot serving follows now, as far as the guard needs it."""

    version: str
    article_ids: frozenset[str]


def refusal(corpus_dir: Path, article_ids: set[str], live: LiveSnapshot | None, options: PublishOptions) -> str | None:
    """Why publishing `article_ids` (the corpus scan's) over `live` is refused, or None when it may go ahead."""
    if not article_ids:
        if options.allow_empty:
            return None
        state = "does not exist" if not corpus_dir.is_dir() else "holds no articles"
        return f"corpus folder {corpus_dir} {state}: refusing to publish an empty knowledge base; pass --allow-empty (run config: allow_empty) if that is intended"
    if live is None or options.allow_shrink:
        return None
    dropped = len(live.article_ids - article_ids)
    if dropped <= MAX_DROPPED_SHARE * len(live.article_ids):
        return None
    return (
        f"would drop {dropped:,} of {len(live.article_ids):,} articles of the live snapshot {live.version} "
        f"(corpus folder {corpus_dir} holds {len(article_ids):,}); pass --allow-shrink (run config: allow_shrink) if that is intended"
    )


def check_corpus(ctx: BuildContext) -> None:
    """Raise `PublishRefused` when the run's corpus folder is missing or holds no articles (unless allowed):
    the `articles` step asks first, so a bucket run Dagster starts on a mistyped corpus path fails before it
    rewrites any bucket as empty, as `petrichor build` refuses before its bucket run."""
    corpus_dir = Path(ctx.settings.corpus_dir)
    reason = refusal(corpus_dir, {a.article_id for a in ctx.scan().articles}, None, ctx.publish)
    if reason:
        raise PublishRefused(reason, corpus_dir)


def check_publish(ctx: BuildContext) -> None:
    """Raise `PublishRefused` when the run's corpus scan may not replace the live snapshot (`refusal`)."""
    corpus_dir = Path(ctx.settings.corpus_dir)
    found = {a.article_id for a in ctx.scan().articles}
    live = live_snapshot(ctx.settings) if found and not ctx.publish.allow_shrink else None
    reason = refusal(corpus_dir, found, live, ctx.publish)
    if reason:
        raise PublishRefused(reason, corpus_dir)


def live_snapshot(settings: Settings) -> LiveSnapshot | None:
    """The articles of the snapshot `CURRENT` names (the object store's, when the build publishes to one).
    None when nothing is published, or when it cannot be read: a build that republishes a broken snapshot
    repairs it, so an unreadable one never blocks it."""
    try:
        if settings.object_store is None:
            version = read_current(settings.snapshots_dir)
            return _local(settings.snapshots_dir, version) if version else None
        store = ObjectStore(settings.object_store)
        version = store.read_pointer().version
        if not version:
            return None
        if (settings.snapshots_dir / version / MANIFEST_FILE).is_file():
            return _local(settings.snapshots_dir, version)
        manifest = Manifest.from_json(store.read_bytes("snapshots", version, MANIFEST_FILE).decode("utf-8"))
        path = store.path("snapshots", version, manifest.tables["articles"]["file"])
        return LiveSnapshot(version, _ids(pq.read_table(path, columns=["article_id"], filesystem=store.fs)))
    except (OSError, ValueError, KeyError) as exc:
        log.warning("the live snapshot's articles cannot be read, so the shrink guard does not apply: %s", exc)
        return None


def _local(snapshots_dir: Path, version: str) -> LiveSnapshot:
    manifest = read_manifest(snapshots_dir, version)
    table = pq.read_table(snapshots_dir / version / manifest.tables["articles"]["file"], columns=["article_id"])
    return LiveSnapshot(version, _ids(table))


def _ids(table) -> frozenset[str]:
    return frozenset(table.column("article_id").to_pylist())
