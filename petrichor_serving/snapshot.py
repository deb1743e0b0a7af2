"""The served snapshot: loading (`snapshot_load`: read through the contract's one reader, verified, built into
a read-only `Snapshot`) and the store (`snapshot_store`: the atomic swap when `CURRENT` moves, fallbacks,
health). The names are re-exported here for the callers that import them from this module.
"""

from petrichor_serving.snapshot_load import INDEX_ONLY, VERIFY_THREADS, RowGroups, Snapshot, SnapshotTables, TableRows, load_snapshot
from petrichor_serving.snapshot_store import Health, SnapshotStore, describe_error

__all__ = [
    "INDEX_ONLY",
    "VERIFY_THREADS",
    "Health",
    "RowGroups",
    "Snapshot",
    "SnapshotStore",
    "SnapshotTables",
    "TableRows",
    "describe_error",
    "load_snapshot",
]
