"""Before a build touches anything: can it write every folder it will write to?

A read-only or misplaced data folder would otherwise surface as a traceback from deep inside Dagster, or
as a publish run that fails with no reason. Each folder is created if missing and a probe file is written
and removed in it; a folder that fails is reported with its path and the system's reason, and the folders
under it are not probed again.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from petrichor_core.config import Settings
from petrichor_pipeline.builder.issues import FileError


def build_folders(settings: Settings, dagster_home: Path | None = None) -> list[Path]:
    """Every folder a build writes, parents first."""
    folders = [settings.data_dir, settings.warehouse_dir, settings.lance_dir, settings.snapshots_dir, settings.embed_cache_dir]
    return folders + ([dagster_home] if dagster_home else [])


def unwritable(folder: Path | str, exc: OSError) -> FileError:
    """The record of a folder the build cannot write, with the system's reason."""
    return FileError(str(folder), f"cannot write to this folder: {exc.strerror or exc}")


def write_problems(folders: Iterable[Path]) -> list[FileError]:
    """A `FileError` for each folder that cannot be written, in English; empty when all can."""
    problems: list[FileError] = []
    failed: list[Path] = []
    for folder in folders:
        folder = Path(os.path.abspath(folder))
        if any(folder == bad or folder.is_relative_to(bad) for bad in failed):
            continue
        try:
            if folder.exists() and not folder.is_dir():
                raise NotADirectoryError(0, "it exists but is a file, not a folder")
            folder.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=".petrichor-write-probe-", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            failed.append(folder)
            problems.append(unwritable(folder, exc))
    return problems
