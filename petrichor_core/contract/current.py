"""`snapshots/CURRENT`, the one pointer serving follows, and the collection of snapshots nothing needs.

A snapshot is published by writing its manifest last and then renaming CURRENT over the old pointer, so
serving loads either the old snapshot or the new one. `verify_snapshot` is the check serving applies before
it loads (the one reader, `contract.reader`), plus the history records its citations need; collection never removes what CURRENT names nor a
folder a build may still be writing.

CURRENT is read only as a small regular file (`inspect_current`): anyone who can write the snapshots folder
could put a symbolic link to any file there, or a FIFO that blocks whoever opens it, and the version is
shown to anonymous callers. A refused CURRENT reads as no pointer, which every side already handles: serving
falls back to a retained snapshot, a build publishes and its rename replaces the entry (never writing
through it).

A build stages a snapshot with a record in its folder (`STAGED_FILE`, written before the manifest) that
`point_current` removes once CURRENT names it; a folder a killed build staged but never pointed at is
therefore never listed, kept as a fallback or served (`published_snapshots`), and the next publish collects
it. Marking the staged rather than the published keeps every folder written before the record as it was.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from petrichor_core.contract.files import write_text_atomic
from petrichor_core.contract.history import stored_records
from petrichor_core.contract.manifest import MANIFEST_FILE, IntegrityError, Manifest, write_manifest
from petrichor_core.contract.reader import open_snapshot

log = logging.getLogger(__name__)

CURRENT_FILE = "CURRENT"
STAGED_FILE = "STAGED"
"""`snapshots/<version>/STAGED`: written before the manifest of a snapshot a build stages, removed once
CURRENT names it (`mark_staged`, `point_current`)."""
MAX_CURRENT_BYTES = 256
"""A version is about 30 characters; a CURRENT larger than this is not a pointer and is never read."""
_VERSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""A snapshot folder's name: no separator, no leading dot (so neither `.` nor `..`), nothing to quote."""


@dataclass(frozen=True)
class CurrentPointer:
    """What CURRENT holds: a version, nothing (missing or empty), or why it was refused. The reason is the
    reader's own words, never the file's content, so it can be shown to any caller."""

    version: str | None = None
    refused: str | None = None


def is_snapshot_name(value: str) -> bool:
    return _VERSION_NAME.fullmatch(value) is not None


def parse_pointer(raw: bytes) -> CurrentPointer:
    """CURRENT's bytes as a pointer (the store's CURRENT is parsed by the same rule)."""
    if len(raw) > MAX_CURRENT_BYTES:
        return CurrentPointer(refused=f"larger than {MAX_CURRENT_BYTES} bytes")
    try:
        value = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return CurrentPointer(refused="not UTF-8 text")
    if not value:
        return CurrentPointer()
    if not is_snapshot_name(value):
        return CurrentPointer(refused="does not name a snapshot folder")
    return CurrentPointer(version=value)


def inspect_current(snapshots_dir: Path) -> CurrentPointer:
    """Read CURRENT without following a link or blocking: `O_NOFOLLOW | O_NONBLOCK`, then `fstat` of what was
    opened; only a regular file of at most `MAX_CURRENT_BYTES` is read."""
    try:
        fd = os.open(snapshots_dir / CURRENT_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return CurrentPointer()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return CurrentPointer(refused="a symbolic link, which is never followed")
        return CurrentPointer(refused=f"cannot be opened ({exc.strerror or type(exc).__name__})")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return CurrentPointer(refused=f"{_kind(info.st_mode)}, not a regular file")
        if info.st_size > MAX_CURRENT_BYTES:
            return CurrentPointer(refused=f"larger than {MAX_CURRENT_BYTES} bytes")
        return parse_pointer(os.read(fd, MAX_CURRENT_BYTES + 1))  # one more byte: a file that grew since fstat
    except OSError as exc:
        return CurrentPointer(refused=f"cannot be read ({exc.strerror or type(exc).__name__})")
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return name
    return "not a file"


def read_current(snapshots_dir: Path) -> str | None:
    """The version CURRENT names; None when it is missing, empty or refused (logged)."""
    pointer = inspect_current(snapshots_dir)
    if pointer.refused:
        log.warning("snapshots/%s refused: %s; treated as missing", CURRENT_FILE, pointer.refused)
    return pointer.version


def point_current(snapshots_dir: Path, version: str) -> None:
    """Point CURRENT at a complete snapshot with one atomic rename; the snapshot is published from then on.

    The rename replaces whatever entry CURRENT is (a link or a FIFO is replaced, never written through); a
    directory there is refused, as the rename cannot replace it and its content is not ours to remove. The
    staged records of the snapshot CURRENT named until now (left by a crash right after its rename) and of
    this one are removed."""
    if not is_snapshot_name(version):
        raise ValueError(f"{version!r} is not a snapshot folder name")
    target = snapshots_dir / CURRENT_FILE
    if target.is_dir() and not target.is_symlink():
        raise IsADirectoryError(errno.EISDIR, f"{target} is a directory, not the CURRENT pointer: move it away and build again")
    if (before := read_current(snapshots_dir)) is not None:
        (snapshots_dir / before / STAGED_FILE).unlink(missing_ok=True)
    write_text_atomic(target, version + "\n")
    (snapshots_dir / version / STAGED_FILE).unlink(missing_ok=True)


def mark_staged(snapshots_dir: Path, version: str) -> None:
    """Record a snapshot folder as staged, before its manifest is written: until CURRENT names it, it is
    neither listed, nor a fallback, nor kept."""
    write_text_atomic(snapshots_dir / version / STAGED_FILE, "staged: published once CURRENT names it\n")


def published_snapshots(snapshots_dir: Path) -> list[str]:
    """The complete snapshots that were published, oldest first: every folder with a manifest and no staged
    record, and CURRENT's (a folder written before staged records existed counts as published, as it did)."""
    try:
        folders = [p for p in snapshots_dir.iterdir() if p.is_dir() and is_snapshot_name(p.name)]
    except OSError:
        return []
    current = inspect_current(snapshots_dir).version  # a refusal is reported by the caller that acts on CURRENT
    return sorted(p.name for p in folders if (p / MANIFEST_FILE).exists() and (p.name == current or not (p / STAGED_FILE).exists()))


def publish(snapshots_dir: Path, manifest: Manifest) -> None:
    """Write the manifest last, then point CURRENT at it."""
    write_manifest(snapshots_dir, manifest)
    point_current(snapshots_dir, manifest.version)


def collect_garbage(snapshots_dir: Path, keep: int) -> list[str]:
    """Delete all but the newest `keep` published snapshots (never CURRENT's) and every folder left unpublished
    (partial, or staged and never pointed at) that is older than the newest published one; a newer one may
    be a build in flight."""
    try:
        folders = sorted(p.name for p in snapshots_dir.iterdir() if p.is_dir())
    except OSError:
        return []
    published = published_snapshots(snapshots_dir)
    current = read_current(snapshots_dir)
    keep_names = set(published[-keep:]) | ({current} if current else set())
    newest = published[-1] if published else ""
    removed = []
    for name in folders:
        if name in keep_names or (name not in published and name > newest):
            continue
        shutil.rmtree(snapshots_dir / name, ignore_errors=True)
        removed.append(name)
    return removed


def verify_snapshot(data_dir: Path, version: str) -> None:
    """The check serving applies before it loads (`contract.reader`: the same reader, every file the manifest
    records hashed, nothing parsed), and the history records its citations resolve from.

    `petrichor build` calls it on `CURRENT` so that a snapshot serving would refuse, or one whose articles
    lost their history records (a deleted `history/` folder), gets republished: the publish writes them.
    """
    reader = open_snapshot(data_dir, version)
    for check in reader.file_checks(every_file=True):
        check.run()
    manifest = reader.manifest
    versions = set(
        pq.read_table(reader.folder / manifest.tables["articles"]["file"], columns=["article_version"]).column("article_version").to_pylist()
    )
    if lost := versions - set(stored_records(data_dir).values()):
        raise IntegrityError(
            f"{len(lost)} of the {len(versions)} article versions of {version} have no history record, so their citations cannot resolve"
        )
