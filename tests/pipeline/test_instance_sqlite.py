"""A build's hold on Dagster's SQLite files: commits without a flush, no checkpoint per event, and nothing
outside the instance or the block touched."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from dagster import AssetMaterialization, DagsterInstance
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from petrichor_pipeline.build.instance_sqlite import held_instance_storage

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
