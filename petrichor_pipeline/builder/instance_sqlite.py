"""A build's events on Dagster's default SQLite instance, without a new connection, a checkpoint and a flush
for each.

Dagster's SQLite storages make an engine and open a connection for every event or run record they store and
close it afterwards (WAL journal). A new engine first reads the server's settings; SQLite checkpoints the WAL
into the database and deletes it whenever the last connection to a file closes; and with the default
`synchronous=FULL` every commit flushes the WAL to disk. A build that edits a few articles stores about 170
events, each to its run's file and most to the index file too: 1.3 s of storage on 1,000 articles, which is a
third of what such a build may take.

For the duration of a build (`held_instance_storage`):
- the instance's run and event storages take their connections from one pooled engine per file
  (`_pooled_connections`), closed when the build ends;
- one idle connection stays open to each of the instance's SQLite files that the build writes, so a
  connection closing no longer checkpoints (SQLite still checkpoints as the WAL grows, and once more when
  the build ends and these connections close);
- a run's new event file is a copy of one Dagster's `_initdb` made for this Dagster version, and a file
  that already has its Alembic revision is not checked again (`_init_shard`): `_initdb` loads every Alembic
  migration script for each file, about 70 ms, and a build opens four;
- Dagster's connections to those files commit with `synchronous=NORMAL`, SQLite's advised setting for WAL:
  the database stays consistent after any crash; a power loss may roll back the last commits. For a build
  that means a lost materialization record, and the next build rebuilds that bucket.

The flush and checkpoint: 1.3–1.5 → 0.7–1.0 s of event storage for that build. The pooled connections:
then 1.0–1.2 → 0.5 s (a materialization 7.3 → 2.5 ms). Only files under the instance's root directory are
touched; an in-memory (ephemeral) or Postgres instance is left as it is."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import dagster
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool, QueuePool

from petrichor_core.contract.files import write_atomic


def _open_if_wal(path: str) -> sqlite3.Connection | None:
    """An idle connection to a file in WAL mode, which has read it once (mapping its WAL index) and holds no
    transaction; None while the file is not in WAL mode yet (Dagster switches a new file when it creates
    its tables) or cannot be read."""
    try:
        keeper = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        if keeper.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
            keeper.execute("SELECT count(*) FROM sqlite_master").fetchall()
            return keeper
    except sqlite3.Error:
        pass
    keeper.close()
    return None


class _Keeper:
    """The connect hook of one build: tunes Dagster's connections to the instance's files and keeps one
    connection open to each file once it is in WAL mode."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.inside: dict[str, bool] = {}
        self.held: dict[str, sqlite3.Connection] = {}
        self.lock = threading.Lock()

    def __call__(self, dbapi_connection: Any, _record: Any) -> None:
        if not isinstance(dbapi_connection, sqlite3.Connection):
            return
        row = dbapi_connection.execute("PRAGMA database_list").fetchone()
        path = row[2] if row else ""
        if not path or not self._under_root(path):
            return
        dbapi_connection.execute("PRAGMA synchronous=NORMAL")
        if path in self.held:
            return
        with self.lock:
            if path not in self.held:
                keeper = _open_if_wal(path)
                if keeper is not None:
                    self.held[path] = keeper

    def _under_root(self, path: str) -> bool:
        inside = self.inside.get(path)
        if inside is None:
            inside = self.inside[path] = Path(os.path.realpath(path)).is_relative_to(self.root)
        return inside

    def close(self) -> None:
        with self.lock:
            held, self.held = self.held, {}
        for keeper in held.values():
            try:
                keeper.close()  # the last one to close a file checkpoints it
            except sqlite3.Error:
                pass


class _SharedEngines:
    """The engines of one build's instance storages, one per SQLite file, each with a pool of connections."""

    def __init__(self) -> None:
        self.engines: dict[str, Engine] = {}
        self.lock = threading.Lock()

    def get(self, url: str) -> Engine:
        with self.lock:
            engine = self.engines.get(url)
            if engine is None:
                engine = create_engine(url, poolclass=QueuePool, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False})
                self.engines[url] = engine
            return engine

    def dispose(self) -> None:
        with self.lock:
            engines, self.engines = self.engines, {}
        for engine in engines.values():
            engine.dispose()  # closes the pooled connections


TEMPLATE_FOLDER = ".shard-template"
"""Beside the run files, under a name Dagster's listing of them (`*.db`) never matches."""


def _stamped(path: Path) -> bool:
    """Whether the file holds an Alembic revision: Dagster's `_initdb` then leaves it as it is."""
    if not path.exists():
        return False
    try:
        with closing(sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_SECONDS)) as conn:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.Error:
        return False
    return bool(row and row[0])


def _shard_template(events: Any) -> Path | None:
    """A run file as Dagster's `_initdb` creates it, made once per instance and Dagster version: made in a
    folder outside the instance (so no held connection keeps its WAL) and moved beside the run files."""
    template = Path(events._base_dir) / TEMPLATE_FOLDER / f"dagster-{dagster.__version__}.db"
    if template.exists():
        return template
    try:
        with tempfile.TemporaryDirectory(prefix="petrichor-shard-") as tmp:
            made = Path(tmp) / "shard.db"
            engine = create_engine(f"sqlite:///{made}", poolclass=NullPool)
            try:
                events._initdb(engine)
            finally:
                engine.dispose()  # the last connection to close checkpoints the WAL into the file
            write_atomic(template, lambda staged: shutil.copyfile(made, staged), durable=False)  # a cache
    except (OSError, SQLAlchemyError, sqlite3.Error):
        return None
    return template


def _copy_new(template: Path, path: Path) -> bool:
    """Create `path` as a copy of `template`, never over a file that appeared meanwhile."""
    staged = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        shutil.copyfile(template, staged)
        os.link(staged, path)  # fails where `path` exists
    except OSError:
        return False
    finally:
        staged.unlink(missing_ok=True)
    return True


def _init_shard(events: Any, engine: Engine, shard: str) -> None:
    """What Dagster's `_initdb` does for one of the event storage's files, without loading Alembic's
    migration scripts for each (about 70 ms a file, four files a build): a file with a revision is left as it
    is, as `_initdb` leaves it; a new run's file is a copy of one `_initdb` made (`_shard_template`); anything
    else, the index file included, goes to `_initdb` itself."""
    path = Path(events.path_for_shard(shard))
    if _stamped(path):
        return
    if shard != INDEX_SHARD_NAME and not path.exists():
        template = _shard_template(events)
        if template is not None and _copy_new(template, path):
            return
    events._initdb(engine)


@contextmanager
def _pooled_connections(instance: Any) -> Iterator[None]:
    """Within the block, the instance's SQLite run and event storages take their connections from one pooled
    engine per file (see the module). Their connect methods are replaced on these objects only, and restored
    afterwards; storages of any other kind are left as they are."""
    from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
    from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage

    engines = _SharedEngines()
    events, runs = instance.event_log_storage, instance.run_storage
    replaced: list[tuple[Any, str]] = []
    if type(events) is SqliteEventLogStorage:
        has_table, has_column = events.has_table, events._has_asset_key_col_on_connection
        tables: dict[str, bool] = {}
        columns: dict[str, bool] = {}

        @contextmanager
        def event_connection(shard: str) -> Iterator[Any]:
            with events._db_lock:  # as Dagster's own `_connect`: one connection of this storage at a time
                engine = engines.get(events.conn_string_for_shard(shard))
                if shard not in events._initialized_dbs:
                    _init_shard(events, engine, shard)
                    events._initialized_dbs.add(shard)
                with engine.connect() as conn, conn.begin():
                    yield conn

        def table_exists(name: str) -> bool:  # Dagster asks before every asset event; no table is dropped mid-build
            if name not in tables:
                tables[name] = has_table(name)
            return tables[name]

        def asset_key_column(conn: Any, name: str) -> bool:  # Dagster inspects the table for every asset event
            if name not in columns:
                columns[name] = has_column(conn, name)
            return columns[name]

        # patched on this storage instance for the build and restored after it (`replaced`)
        events._connect, events.has_table, events._has_asset_key_col_on_connection = event_connection, table_exists, asset_key_column  # type: ignore[method-assign, assignment]
        replaced += [(events, "_connect"), (events, "has_table"), (events, "_has_asset_key_col_on_connection")]
    if type(runs) is SqliteRunStorage:

        @contextmanager
        def run_connection() -> Iterator[Any]:
            with engines.get(runs._conn_string).connect() as conn, conn.begin():
                yield conn

        runs.connect = run_connection  # type: ignore[method-assign]  # restored after the build (`replaced`)
        replaced.append((runs, "connect"))
    try:
        yield
    finally:
        for storage, name in replaced:
            delattr(storage, name)
        engines.dispose()


@contextmanager
def held_instance_storage(instance: Any) -> Iterator[None]:
    """Within the block, Dagster's SQLite connections to `instance`'s files commit without a flush and
    checkpoint only as the WAL grows (see the module)."""
    root = getattr(instance, "root_directory", None)
    if not root or getattr(instance, "is_ephemeral", False):
        yield
        return
    keeper = _Keeper(Path(os.path.realpath(root)))
    event.listen(Engine, "connect", keeper)
    try:
        with _pooled_connections(instance):
            yield
    finally:
        event.remove(Engine, "connect", keeper)
        keeper.close()
