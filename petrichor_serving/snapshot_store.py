"""The snapshot store's lifecycle: the snapshot serving holds, the atomic swap when `CURRENT` moves, the
fallback to a retained snapshot, and what `/healthz` and `/api/snapshot` report.

A snapshot is loaded completely (`snapshot_load.load_snapshot`) before one reference is replaced, so a
request holds either the old or the new snapshot for its whole life and never a mix; a snapshot that fails
to load is refused and the old one keeps serving. With nothing serving yet (start-up), a refused `CURRENT`
falls back to the newest retained snapshot that verifies. `status()` reports the versions and the error;
`health()` says whether the store serves what `CURRENT` names.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from petrichor_core.contract.current import inspect_current, published_snapshots
from petrichor_serving.snapshot_load import Snapshot, load_snapshot

log = logging.getLogger(__name__)

__all__ = ["Health", "SnapshotStore", "describe_error"]


_ABSOLUTE_PATH = re.compile(r"(?<![\w.~])(?:[A-Za-z]:)?[/\\](?:[^\s'\"/\\:,;()]+[/\\])*([^\s'\"/\\:,;()]*)")


def describe_error(exc: BaseException) -> str:
    """`Type: message` with every filesystem path cut to its file name: refusals are shown to anonymous
    callers (`/healthz`), who learn which file failed but nothing of the server's layout."""
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.strerror or 'cannot read'}: {Path(str(exc.filename)).name}"
    else:
        text = str(exc)
    return f"{type(exc).__name__}: {_ABSOLUTE_PATH.sub(lambda m: m.group(1), text)}"


@dataclass(frozen=True)
class Health:
    """What `/healthz` reports: healthy only when the snapshot `CURRENT` names is the one serving."""

    ok: bool
    snapshot_version: str | None
    reason: str | None = None


class SnapshotStore:
    """Holds the current snapshot and swaps it when `CURRENT` moves; never serves a half-loaded or unverified one."""

    def __init__(self, data_dir: Path, *, embed_fingerprint: str | None = None):
        self.data_dir = Path(data_dir)
        self.embed_fingerprint = embed_fingerprint
        self._current: Snapshot | None = None
        self._failed: dict[str, str | None] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def current(self) -> Snapshot | None:
        return self._current

    def _load(self, version: str) -> Snapshot:
        return load_snapshot(self.data_dir, version, embed_fingerprint=self.embed_fingerprint)

    def refresh(self) -> bool:
        """Load and swap if CURRENT names a new version; True when a swap happened.

        With nothing serving yet, a `CURRENT` that is missing, refused (`contract.current.inspect_current`: a
        link, a FIFO, a directory, too large, not a folder name) or names a snapshot that fails to load is
        refused alike, and the newest retained snapshot that verifies serves instead. Reading CURRENT never
        blocks, so neither start-up nor the watcher can hang on it."""
        with self._lock:
            pointer = inspect_current(self.data_dir / "snapshots")
            if pointer.refused:
                return self._refuse(None, f"CURRENT refused: {pointer.refused}")
            version = pointer.version
            if version is None:
                if not self._retained(exclude=None):
                    return False  # nothing was ever published
                return self._refuse(None, "CURRENT is missing or empty")
            if self._current is not None and self._current.version == version:
                self._failed = None  # CURRENT names what serves (again, after a rollback)
                return False
            if self._failed is not None and self._failed["version"] == version:
                return False
            try:
                snap = self._load(version)
            except Exception as exc:
                log.error("refusing snapshot %s: %s", version, exc)
                return self._refuse(version, describe_error(exc))
            self._current = snap  # the swap: one reference assignment
            self._failed = None
            log.info("serving snapshot %s (loaded in %.2fs)", version, snap.load_seconds)
            return True

    def _refuse(self, version: str | None, error: str) -> bool:
        """Record why CURRENT is not served (once per cause); with nothing serving, fall back."""
        refused = {"version": version, "error": error}
        if self._failed == refused:
            return False
        if version is None:
            log.error("refusing CURRENT: %s", error)
        self._failed = refused
        return self._current is None and self._fall_back(refused=version)

    def _retained(self, *, exclude: str | None) -> list[str]:
        """The published snapshots on disk, newest first (one a build staged but never published is not one)."""
        return [v for v in reversed(published_snapshots(self.data_dir / "snapshots")) if v != exclude]

    def _fall_back(self, *, refused: str | None) -> bool:
        """Serve the newest retained snapshot that verifies, newest first; True when one loaded."""
        for version in self._retained(exclude=refused):
            try:
                snap = self._load(version)
            except Exception as exc:
                log.error("fallback snapshot %s refused too: %s", version, exc)
                continue
            self._current = snap
            log.warning("CURRENT (%s) refused; serving the retained snapshot %s", refused or "missing", version)
            return True
        return False

    def health(self) -> Health:
        cur, failed = self._current, self._failed
        version = cur.version if cur else None
        if failed is not None:
            serving = f"serving the retained snapshot {version}" if cur else "no snapshot is served"
            if failed["version"] is None:
                return Health(False, version, f"{failed['error']}; {serving}")
            return Health(False, version, f"CURRENT names {failed['version']}, which was refused ({failed['error']}); {serving}")
        if cur is None:
            return Health(False, None, "no snapshot has been published: run `petrichor build`")
        return Health(True, version)

    def status(self, *, rows: Callable[[Snapshot], dict[str, int]] | None = None) -> dict[str, Any]:
        """The served snapshot, the refusal and CURRENT's pointer; `rows(snapshot)` replaces the manifest's
        row counts (of every tenant) with what a caller may see."""
        cur = self._current
        return {
            "current": None
            if cur is None
            else {
                "version": cur.version,
                "created_at": cur.manifest.created_at,
                "parent_version": cur.manifest.parent_version,
                "rows": cur.manifest.row_counts if rows is None else rows(cur),
                "vector_tables": {k: v.get("version") for k, v in cur.manifest.vector_tables.items()},
                "vectors": cur.vector_note,
                "loaded_at": cur.loaded_at,
                "load_seconds": round(cur.load_seconds, 3),
            },
            "refused": self._failed,
            "pointer": inspect_current(self.data_dir / "snapshots").version,
        }

    def watch(self, interval_s: float) -> None:
        """Poll CURRENT in a daemon thread until `stop()`."""

        def loop() -> None:
            while not self._stop.wait(interval_s):
                try:
                    self.refresh()
                except Exception:  # the watcher must outlive any single failure
                    log.exception("snapshot refresh failed")

        self._thread = threading.Thread(target=loop, name="snapshot-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
