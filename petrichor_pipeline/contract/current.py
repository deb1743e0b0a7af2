"""`snapshots/CURRENT`, the one pointer serving follows, and the collection of snapshots nothing needs.

A snapshot is published by writing its manifest last and then renaming CURRENT over the old pointer, so
serving loads either the old snapshot or the new one. `verify_snapshot` is the check serving applies before
it loads; collection never removes what CURRENT names nor a folder a build may still be writing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from petrichor_pipeline.contract.files import write_text_atomic
from petrichor_pipeline.contract.lexical_files import open_lexical_files
from petrichor_pipeline.contract.manifest import MANIFEST_FILE, IntegrityError, Manifest, read_manifest, verify_files, write_manifest
from petrichor_pipeline.contract.vectors import open_vector_files, open_vector_table

CURRENT_FILE = "CURRENT"


def read_current(snapshots_dir: Path) -> str | None:
    try:
        value = (snapshots_dir / CURRENT_FILE).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return value or None


def point_current(snapshots_dir: Path, version: str) -> None:
    """Point CURRENT at a complete snapshot with one atomic rename."""
    write_text_atomic(snapshots_dir / CURRENT_FILE, version + "\n")


def publish(snapshots_dir: Path, manifest: Manifest) -> None:
    """Write the manifest last, then point CURRENT at it."""
    write_manifest(snapshots_dir, manifest)
    point_current(snapshots_dir, manifest.version)


def collect_garbage(snapshots_dir: Path, keep: int) -> list[str]:
    """Delete all but the newest `keep` complete snapshots and abandoned partial folders; never CURRENT's."""
    current = read_current(snapshots_dir)
    if not snapshots_dir.exists():
        return []
    folders = sorted((p for p in snapshots_dir.iterdir() if p.is_dir()), key=lambda p: p.name)
    complete = [p for p in folders if (p / MANIFEST_FILE).exists()]
    keep_names = {p.name for p in complete[-keep:]} | ({current} if current else set())
    newest = complete[-1].name if complete else ""
    removed = []
    for p in folders:
        # a folder without a manifest that is newer than the newest complete one may be a build in flight
        partial_in_flight = not (p / MANIFEST_FILE).exists() and p.name > newest
        if p.name in keep_names or partial_in_flight:
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p.name)
    return removed


def verify_snapshot(data_dir: Path, version: str) -> None:
    """The whole check serving applies before it loads, minus parsing: files, then vector tables.

    `petrichor build` calls it on `CURRENT` so that a snapshot serving would refuse gets republished.
    """
    snaps = data_dir / "snapshots"
    try:
        manifest = read_manifest(snaps, version)
    except (OSError, ValueError, TypeError) as exc:
        raise IntegrityError(f"manifest of {version}: {type(exc).__name__}: {exc}") from exc
    verify_files(snaps, manifest)
    if files := manifest.lexical.get("files"):
        open_lexical_files(snaps / version, files)
    for name, info in manifest.vector_tables.items():
        open_vector_table(data_dir / "lance", info)
        if "compact" in info:
            open_vector_files(snaps / version, name, info)
