"""A build's hold on Dagster's SQLite files: commits without a flush, no checkpoint per event, and nothing
outside the instance or the block touched."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from dagster import AssetMaterialization, DagsterInstance
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from petrichor_pipeline.builder.instance_sqlite import held_instance_storage

FULL, NORMAL = 2, 1


def _synchronous(path: Path) -> int:
    engine = create_engine(f"sqlite:///{path}", poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return conn.execute(text("PRAGMA synchronous")).scalar_one()
    finally:
        engine.dispose()


@pytest.fixture()
def instance(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    with DagsterInstance.from_ref(DagsterInstance.local_temp(str(home)).get_ref()) as inst:
        yield inst


def _index_db(instance) -> Path:
    found = sorted(Path(instance.root_directory).rglob("index.db"))
    assert found, "the instance keeps an index file"
    return found[0]


def test_events_keep_the_wal_until_the_block_ends(instance) -> None:
    instance.report_runless_asset_event(AssetMaterialization("a"))
    index = _index_db(instance)
    wal = index.with_name(index.name + "-wal")
    assert not wal.exists(), "Dagster's closing connection checkpoints and removes the WAL"
    with held_instance_storage(instance):
        for i in range(3):
            instance.report_runless_asset_event(AssetMaterialization("a", metadata={"i": i}))
        assert wal.exists(), "an open connection keeps closing ones from checkpointing"
        assert _synchronous(index) == NORMAL
    assert not wal.exists(), "the block's end checkpoints"
    assert _synchronous(index) == FULL, "the hook is gone after the block"
    records = instance.fetch_materializations(AssetMaterialization("a").asset_key, limit=10).records
    assert len(records) == 4, "every event stored in the block is in the database"


def test_files_outside_the_instance_are_left_alone(instance, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).close()
    with held_instance_storage(instance):
        assert _synchronous(other) == FULL


def test_an_ephemeral_instance_is_left_alone() -> None:
    with DagsterInstance.ephemeral() as inst, held_instance_storage(inst):
        inst.report_runless_asset_event(AssetMaterialization("a"))
        assert len(inst.fetch_materializations(AssetMaterialization("a").asset_key, limit=10).records) == 1


class _Connects:
    """Counts the DBAPI connections SQLAlchemy opens (each new one pays sqlite3.connect and its settings)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *_args) -> None:
        self.count += 1


def _counting():
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    connects = _Connects()
    event.listen(Engine, "connect", connects)
    return connects, lambda: event.remove(Engine, "connect", connects)


def test_events_and_runs_reuse_pooled_connections_within_the_block(instance) -> None:
    from dagster._core.storage.dagster_run import DagsterRun

    instance.report_runless_asset_event(AssetMaterialization("a"))  # the index file exists before counting
    connects, stop = _counting()
    try:
        for i in range(5):
            instance.report_runless_asset_event(AssetMaterialization("a", metadata={"i": i}))
        outside = connects.count
        connects.count = 0
        with held_instance_storage(instance):
            for i in range(20):
                instance.report_runless_asset_event(AssetMaterialization("a", metadata={"i": i}))
            instance.add_run(DagsterRun(job_name="j", run_id="r1"))
            instance.add_run(DagsterRun(job_name="j", run_id="r2"))
            assert {r.run_id for r in instance.get_runs()} == {"r1", "r2"}
        inside = connects.count
    finally:
        stop()
    assert outside >= 5, "Dagster opens a connection for every event"
    assert inside <= 6, f"{inside} connections for 20 events and 3 run calls: the block reuses them"
    events, runs = instance.event_log_storage, instance.run_storage
    assert "_connect" not in vars(events) and "has_table" not in vars(events) and "connect" not in vars(runs)
    assert len(instance.fetch_materializations(AssetMaterialization("a").asset_key, limit=100).records) == 26
    assert {r.run_id for r in instance.get_runs()} == {"r1", "r2"}


def test_events_from_threads_within_the_block_are_all_stored(instance) -> None:
    import threading

    def report(k: int) -> None:
        for i in range(10):
            instance.report_runless_asset_event(AssetMaterialization(f"t{k}", metadata={"i": i}))

    with held_instance_storage(instance):
        threads = [threading.Thread(target=report, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for k in range(4):
        assert len(instance.fetch_materializations(AssetMaterialization(f"t{k}").asset_key, limit=100).records) == 10


def test_a_failing_block_restores_the_storages(instance) -> None:
    with pytest.raises(RuntimeError), held_instance_storage(instance):
        instance.report_runless_asset_event(AssetMaterialization("a"))
        raise RuntimeError("step failed")
    assert "_connect" not in vars(instance.event_log_storage) and "connect" not in vars(instance.run_storage)
    index = _index_db(instance)
    assert not index.with_name(index.name + "-wal").exists(), "the pooled connections were closed"


def _schema(path: Path) -> tuple[list[tuple], list[tuple]]:
    with sqlite3.connect(path) as conn:
        tables = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").fetchall()
        revision = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        mode = conn.execute("PRAGMA journal_mode").fetchall()
    return tables, revision + mode


def _run_event(instance, run_id: str) -> None:
    from dagster import DagsterEvent, DagsterEventType, EventLogEntry
    from dagster._core.events import EngineEventData

    event = DagsterEvent(DagsterEventType.ENGINE_EVENT.value, job_name="j", event_specific_data=EngineEventData(), message="hello")
    instance.store_event(EventLogEntry(error_info=None, level="INFO", user_message="", run_id=run_id, timestamp=1.0, dagster_event=event))


def test_new_run_files_in_the_block_are_what_dagster_makes_without_loading_alembic(instance, monkeypatch) -> None:
    from alembic.script import ScriptDirectory

    storage = instance.event_log_storage
    _run_event(instance, "outside")  # Dagster's own `_initdb`
    loads = []
    from_config = ScriptDirectory.from_config.__func__
    monkeypatch.setattr(ScriptDirectory, "from_config", classmethod(lambda cls, cfg: loads.append(1) or from_config(cls, cfg)))
    with held_instance_storage(instance):
        _run_event(instance, "first")  # makes the template (one `_initdb`)
        made_template = len(loads)
        for run_id in ("second", "third"):
            _run_event(instance, run_id)
        _run_event(instance, "outside")  # an existing file: left as it is
    assert made_template >= 1 and len(loads) == made_template, "only the template loads Alembic's scripts"
    expected = _schema(Path(storage.path_for_shard("outside")))
    for run_id in ("first", "second", "third"):
        assert _schema(Path(storage.path_for_shard(run_id))) == expected
        assert [e.message for e in instance.all_logs(run_id)] == ["hello"]
    assert len(instance.all_logs("outside")) == 2
    assert set(storage.get_all_run_ids()) == {"outside", "first", "second", "third"}, "the template is not listed as a run"


def test_a_run_file_that_appears_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    from petrichor_pipeline.builder.instance_sqlite import _copy_new

    template, target = tmp_path / "template.db", tmp_path / "run.db"
    template.write_bytes(b"template")
    target.write_bytes(b"theirs")
    assert not _copy_new(template, target)
    assert target.read_bytes() == b"theirs" and sorted(p.name for p in tmp_path.iterdir()) == ["run.db", "template.db"]
    target.unlink()
    assert _copy_new(template, target) and target.read_bytes() == b"template"
