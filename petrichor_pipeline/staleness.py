"""Which buckets are stale, read from the Dagster instance: the one record of what was built from what.

Every bucket step records, on its materialization, the state each of its buckets was built from
(`BUCKET_STATE`: the bucket's data version, the build key and the vectors it left pending). The corpus is an
observable source asset partitioned like the buckets; its observations carry each bucket's data version, so
Dagster's own staleness view (the UI) marks exactly the buckets a corpus change touched. `petrichor build`,
the corpus sensor, a UI materialization and a backfill all write and read these same records.

The instance does not know the data folder: one instance may outlive its folder (deleted, restored from an
older backup, an `s3://` build's lost staging folder) or serve two. So each record also carries the digest
of the files the step left in the warehouse (`Warehouse.files_digest`), and a bucket is fresh only while the
planning build's own warehouse still holds exactly those files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dagster import AssetKey, AssetObservation, AssetRecordsFilter, DagsterEventType, DagsterInstance
from dagster._core.definitions.data_version import DATA_VERSION_TAG

from petrichor_core.config import BUCKETS

if TYPE_CHECKING:
    from petrichor_pipeline.builder.warehouse import Warehouse

BUCKET_STATE = "petrichor/bucket_state"
"""Materialization metadata: `{bucket: {"data_version", "build_key", "pending", "files"}}` for the run's buckets."""
STALE_TAG = "petrichor/stale_buckets"
"""Run tag of `petrichor build`'s bucket run: the buckets of its partition range that are stale (comma
separated). The others lie inside the range only to make it contiguous; their steps skip them."""
CORPUS = AssetKey("corpus")
CODE_VERSION_TAG = "dagster/code_version"


@dataclass(frozen=True)
class BucketState:
    """What one bucket step's output was built from."""

    data_version: str
    build_key: str
    pending: int = 0
    files: str | None = None
    """The digest of the bucket's warehouse files the step left (`Warehouse.files_digest`)."""

    def to_dict(self) -> dict[str, Any]:
        return {"data_version": self.data_version, "build_key": self.build_key, "pending": self.pending, "files": self.files}


@dataclass(frozen=True)
class Recorded:
    """A bucket step's latest materialization of one bucket: its state and the step's code version then."""

    state: BucketState | None
    code_version: str | None


def state_metadata(states: Mapping[str, BucketState], warehouse: Warehouse | None = None, asset: str | None = None) -> dict[str, Any]:
    """The `BUCKET_STATE` metadata; with `warehouse` and `asset`, each state carries the digest of the files
    the step wrote, taken now (after the step's last write)."""
    from dagster import MetadataValue

    if warehouse is not None and asset is not None:
        states = {b: replace(s, files=warehouse.files_digest(asset, b)) for b, s in states.items()}
    return {BUCKET_STATE: MetadataValue.json({b: s.to_dict() for b, s in sorted(states.items())})}


def _state_of(metadata: Mapping[str, Any], bucket: str) -> BucketState | None:
    raw = metadata.get(BUCKET_STATE)
    value = getattr(raw, "value", raw)
    if isinstance(value, str):
        value = json.loads(value)
    entry = (value or {}).get(bucket)
    if not isinstance(entry, dict):
        return None
    files = entry.get("files")
    return BucketState(str(entry.get("data_version")), str(entry.get("build_key")), int(entry.get("pending") or 0), str(files) if files else None)


def recorded(instance: DagsterInstance, asset: AssetKey, buckets: Sequence[str] = BUCKETS) -> dict[str, Recorded]:
    """The latest materialization of each bucket of `asset`, as the instance stored it."""
    latest = instance.get_latest_storage_id_by_partition(asset, DagsterEventType.ASSET_MATERIALIZATION, set(buckets))
    if not latest:
        return {}
    records = instance.fetch_materializations(AssetRecordsFilter(asset_key=asset, storage_ids=list(latest.values())), limit=len(latest)).records
    out: dict[str, Recorded] = {}
    by_id = {r.storage_id: r for r in records}
    for bucket, storage_id in latest.items():
        rec = by_id.get(storage_id)
        mat = rec.asset_materialization if rec is not None else None
        if mat is None:
            continue
        out[bucket] = Recorded(_state_of(mat.metadata, bucket), (mat.tags or {}).get(CODE_VERSION_TAG))
    return out


def stale_buckets(
    instance: DagsterInstance,
    assets: Iterable[Any],
    versions: Mapping[str, str],
    build_key: str,
    *,
    full_rebuild: bool = False,
    warehouse: Warehouse | None = None,
) -> list[str]:
    """Buckets some step has to run for: never materialized, built from another data version, build key or
    code version, or with vectors left pending. `assets` are the bucket steps' definitions.

    With `warehouse` (a build plans against its own data folder) a bucket is also stale when the files a
    step recorded are not the ones this warehouse holds, or the record predates file digests. Without it
    only the instance's records are compared (what the corpus sensor asks: which buckets a change touched)."""
    if full_rebuild:
        return list(BUCKETS)
    stale: set[str] = set()
    for assets_def in assets:
        for key in assets_def.keys:
            code = assets_def.code_versions_by_key.get(key)
            seen = recorded(instance, key)
            for bucket in BUCKETS:
                rec = seen.get(bucket)
                want = BucketState(versions[bucket], build_key)
                if rec is None or rec.state is None or rec.code_version != code:
                    stale.add(bucket)
                elif (rec.state.data_version, rec.state.build_key) != (want.data_version, want.build_key) or rec.state.pending:
                    stale.add(bucket)
                elif warehouse is not None and rec.state.files != warehouse.files_digest(key.to_user_string(), bucket):
                    stale.add(bucket)
    return [b for b in BUCKETS if b in stale]


def fresh_in_run(tags: Mapping[str, str], buckets: Sequence[str]) -> set[str]:
    """The run's buckets its planner found fresh (none when the run carries no `STALE_TAG`)."""
    if STALE_TAG not in tags:
        return set()
    stale = {b for b in tags[STALE_TAG].split(",") if b}
    return {b for b in buckets if b not in stale}


def observed_versions(instance: DagsterInstance) -> dict[str, str]:
    """The corpus data version of each bucket as last observed."""
    latest = instance.get_latest_storage_id_by_partition(CORPUS, DagsterEventType.ASSET_OBSERVATION)
    if not latest:
        return {}
    records = instance.fetch_observations(AssetRecordsFilter(asset_key=CORPUS, storage_ids=list(latest.values())), limit=len(latest)).records
    by_id = {r.storage_id: r for r in records}
    out = {}
    for bucket, sid in latest.items():
        obs = by_id[sid].asset_observation if sid in by_id else None
        if obs is not None and obs.data_version is not None:
            out[bucket] = obs.data_version
    return out


def corpus_observations(instance: DagsterInstance, versions: Mapping[str, str]) -> list[AssetObservation]:
    """Observations of the buckets whose corpus data version differs from the one last observed."""
    seen = observed_versions(instance)
    return [
        AssetObservation(asset_key=CORPUS, partition=b, tags={DATA_VERSION_TAG: v}, metadata={"data_version": v})
        for b, v in sorted(versions.items())
        if seen.get(b) != v
    ]


def observe_corpus(instance: DagsterInstance, versions: Mapping[str, str]) -> int:
    """Record the corpus as it is now (runless observations), so the UI's staleness view sees the change."""
    events = corpus_observations(instance, versions)
    for event in events:
        instance.report_runless_asset_event(event)
    return len(events)
