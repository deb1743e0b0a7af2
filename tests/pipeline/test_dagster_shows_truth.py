"""What Dagster shows after `petrichor build` is the truth: every asset check evaluated on the instance,
a failed blocking check refusing the publish, and each bucket's materialization carrying its own figures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

from petrichor_core.contract.current import read_current
from petrichor_pipeline import runner
from petrichor_pipeline.assets import snapshot as snapshot_assets
from petrichor_pipeline.builder.warehouse import Warehouse
from petrichor_pipeline.checks import SNAPSHOT_CHECKS
from petrichor_pipeline.definitions import ASSET_CHECKS, defs
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from tests.conftest import CORPUS, run_cli_build

pytestmark = pytest.mark.slow  # builds a corpus

ARTICLES = ("petrichor-en/guides/quick-start.md", "petrichor-en/troubleshooting.md", "petrichor-en/operations/support-escalation.md")
FIRST, MIDDLE, LAST = ARTICLES  # buckets 00, 07 and 0e: editing the first and last leaves the middle inside the run's range
BLOCKING = {
    "snapshot_checksums_verify",
    "snapshot_schemas_valid",
    "snapshot_referential_integrity",
    "snapshot_vector_dimensions",
    "snapshot_has_no_stale_articles",
}


def _copy(src: Path, root: Path) -> tuple[Path, Path, Path]:
    for name in ("corpus", "data", "home"):
        shutil.copytree(src / name, root / name)
    return root / "corpus", root / "data", root / "home"


def _edit(corpus: Path, rel: str) -> None:
    path = corpus / rel
    path.write_text(path.read_text(encoding="utf-8") + "\n\n## Added\n\nAn added paragraph.\n", encoding="utf-8")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, dict]:
    """Three articles in buckets 00, 07 and 0e, built once."""
    root = tmp_path_factory.mktemp("tiny")
    for rel in ("petrichor-en/_kb.yaml", *ARTICLES):
        (root / "corpus" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / rel, root / "corpus" / rel)
    summary = run_cli_build(root / "data", root / "corpus", root / "home")
    assert summary["_exit_code"] == 0 and summary["published"], summary
    return root, summary


def _check_statuses(home: Path) -> dict[str, AssetCheckExecutionRecordStatus]:
    keys = list(defs.resolve_asset_graph().asset_check_keys)
    with DagsterInstance.from_config(str(home)) as instance:
        latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
    return {k.name: r.status for k, r in latest.items()}


def _per_bucket(home: Path, asset: str) -> dict[str, dict]:
    """The latest materialization metadata of each bucket of `asset`."""
    with DagsterInstance.from_config(str(home)) as instance:
        records = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey(asset)), limit=100).records
    out: dict[str, dict] = {}
    for rec in sorted(records, key=lambda r: r.storage_id):
        mat = rec.asset_materialization
        out[mat.partition] = {k: getattr(v, "value", v) for k, v in mat.metadata.items()}
    return out


def test_a_build_evaluates_every_asset_check_on_the_instance(tiny):
    root, _ = tiny
    statuses = _check_statuses(root / "home")
    assert len(statuses) == len({key for c in ASSET_CHECKS for key in c.check_keys}) == 9
    assert set(statuses.values()) == {AssetCheckExecutionRecordStatus.SUCCEEDED}, statuses
    blocking = {spec.name for c in ASSET_CHECKS for spec in c.check_specs if spec.blocking}
    assert blocking == BLOCKING == set(SNAPSHOT_CHECKS)


def test_the_bucket_run_announces_each_asset_once_for_its_range(tiny):
    """One planned materialization per bucket asset naming the run's range (`runner.PLANNED_AS_RANGE`), not
    one per asset and bucket; the publish run's unpartitioned assets one each."""
    root, _ = tiny
    with DagsterInstance.from_config(str(root / "home")) as instance:
        for asset in ("chunks", "questions", "snapshot"):
            records = instance.fetch_planned_materializations(AssetKey(asset), limit=100).records
            assert len(records) == 1, asset
            planned = records[0].event_log_entry.dagster_event.event_specific_data
            if asset != "snapshot":
                assert planned.partition is None and {"00", "07", "0e"} <= set(planned.partitions_subset.get_partition_keys())


def test_each_bucket_materialization_carries_its_own_figures(tiny):
    root, summary = tiny
    chunks = _per_bucket(root / "home", "chunks")
    assert len(chunks) == 16
    for bucket, meta in chunks.items():
        table = Warehouse(root / "data" / "warehouse").read("chunks", bucket)
        rows = table.num_rows if table is not None else 0
        assert meta["rows"] == rows, bucket
        assert meta["articles_built"] == sum(bucket_of(article_id_of(a)) == bucket for a in ARTICLES), bucket
        assert set(meta["petrichor/bucket_state"]) == {bucket}
    assert sum(m["rows"] for m in chunks.values()) == summary["stages"]["chunks"]["rows"] > 0
    assert sum(m["articles_built"] for m in chunks.values()) == summary["articles"]["built"] == 3
    questions = _per_bucket(root / "home", "questions")
    for bucket, meta in questions.items():
        assert all(bucket_of(a) == bucket for a in meta["model_calls_by_article"]), bucket
        assert meta["model_calls"] == sum(meta["model_calls_by_article"].values())


def test_a_ranged_run_records_each_bucket_and_the_summary_sums_only_the_built_ones(tiny, tmp_path):
    corpus, data, home = _copy(tiny[0], tmp_path)
    _edit(corpus, FIRST)
    _edit(corpus, LAST)
    summary = run_cli_build(data, corpus, home)
    assert summary["_exit_code"] == 0 and summary["published"], summary
    edited = {bucket_of(article_id_of(FIRST)), bucket_of(article_id_of(LAST))}
    assert summary["partitions"]["materialized"] == [f"{i:02x}" for i in range(int(min(edited), 16), int(max(edited), 16) + 1)]
    chunks = _per_bucket(home, "chunks")
    middle = bucket_of(article_id_of(MIDDLE))
    assert chunks[middle].get("unchanged") is True and "rows" not in chunks[middle]
    built = {b: m for b, m in chunks.items() if b in edited}
    assert all(m["articles_built"] == 1 for m in built.values())
    assert summary["stages"]["chunks"]["rows"] == sum(m["rows"] for m in built.values())
    assert summary["articles"] == {"total": 3, "built": 2, "skipped": 1, "failed": 0}
    assert summary["model_calls"] > 0


def _evaluate_discard_sensor(home: Path, data: Path) -> None:
    """`discard_refused_snapshot` as the daemon runs it for the failed publish run (the publish job's path)."""
    from dagster import DagsterEventType, RunsFilter, build_run_status_sensor_context

    from petrichor_pipeline.sensors import discard_refused_snapshot

    mp = pytest.MonkeyPatch()
    mp.setenv("PETRICHOR_DATA", str(data))
    try:
        with DagsterInstance.from_config(str(home)) as instance:
            run = instance.get_runs(RunsFilter(tags={"petrichor/trigger": "cli"}), limit=1)[0]  # the newest: the publish run
            failure = instance.all_logs(run.run_id, of_type=DagsterEventType.RUN_FAILURE)[0].dagster_event
            ctx = build_run_status_sensor_context("discard_refused_snapshot", failure, instance, run).for_run_failure()
            discard_refused_snapshot(ctx)
    finally:
        mp.undo()


def test_a_failed_blocking_check_refuses_the_publish(tiny, tmp_path, monkeypatch):
    corpus, data, home = _copy(tiny[0], tmp_path)
    before = read_current(data / "snapshots")
    staged: list[str] = []

    def stage_then_damage(ctx, **kwargs):
        """A snapshot whose written file is not what its manifest says (a bad disk, a bug in a writer)."""
        manifest = stage(ctx, **kwargs)
        staged.append(manifest.version)
        with open(data / "snapshots" / manifest.version / "chunks.parquet", "ab") as f:
            f.write(b"garbage")
        return manifest

    stage = snapshot_assets.stage_snapshot
    monkeypatch.setattr(snapshot_assets, "stage_snapshot", stage_then_damage)
    monkeypatch.setattr(runner, "discard_unpublished", lambda *a: None)  # left to the sensor, checked below
    _edit(corpus, FIRST)
    summary = run_cli_build(data, corpus, home)
    assert staged and (data / "snapshots" / staged[0]).exists()
    _evaluate_discard_sensor(home, data)

    assert summary["_exit_code"] != 0 and not summary["published"]
    assert read_current(data / "snapshots") == before == summary["snapshot_version"]
    assert staged and not (data / "snapshots" / staged[0]).exists()  # the refused snapshot is not kept for a fallback
    refused = [e for e in summary["errors"] if e.get("check")]
    assert {e["check"] for e in refused} >= {"snapshot_checksums_verify"} and all(e["check"] in BLOCKING for e in refused)
    assert "snapshot_checksums_verify" in summary["failed_run"]
    statuses = _check_statuses(home)
    assert statuses["snapshot_checksums_verify"] == AssetCheckExecutionRecordStatus.FAILED
    with DagsterInstance.from_config(str(home)) as instance:
        pointed = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey("published_snapshot")), limit=1).records
    assert pointed[0].asset_materialization.metadata["snapshot_version"].value == before  # still the first build's
