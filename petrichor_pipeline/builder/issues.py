"""What a build reports beside its snapshot: warnings and failed files, as typed records end to end.

A step records them per article; each bucket run writes all of them to a run-scoped file in the warehouse
(`write_run_issues`), which the build reads back whole (`read_run_issues`): Dagster's metadata shows the
first few per bucket for the UI, and no cap of it decides what `petrichor build --json` lists.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from petrichor_core.contract.files import write_text_atomic

RUN_ISSUES_DIR = "_run_issues"
"""`<warehouse>/_run_issues/<run_id>/<asset>.<bucket>.json`: one bucket run's records, written only where a
step has some, removed once read (and, left by a build that stopped, when the next build starts)."""


@dataclass(frozen=True)
class BuildWarning:
    """Something a build kept going past: about one file (`path`), or the whole build (`path` None)."""

    message: str
    path: str | None = None

    def __str__(self) -> str:
        """The summary's `warnings` entry: `<path>: <message>`, or the message alone."""
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "message": self.message}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> BuildWarning:
        return cls(message=raw["message"], path=raw.get("path"))


@dataclass(frozen=True)
class FileError:
    """A file (or, with `check`, a blocking asset check) the build could not take: the summary's `errors` entry."""

    path: str
    reason: str
    check: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason, **({"check": self.check} if self.check else {})}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FileError:
        return cls(path=raw["path"], reason=raw["reason"], check=raw.get("check"))


def _run_dir(warehouse_root: Path, run_id: str) -> Path:
    return Path(warehouse_root) / RUN_ISSUES_DIR / run_id


def write_run_issues(
    warehouse_root: Path, run_id: str, asset: str, bucket: str, warnings: Iterable[BuildWarning], failed: Iterable[FileError]
) -> None:
    """Every record of one bucket of one run, for the build that started the run."""
    doc = {"warnings": [w.to_json() for w in warnings], "failed": [f.to_json() for f in failed]}
    write_text_atomic(_run_dir(warehouse_root, run_id) / f"{asset}.{bucket}.json", json.dumps(doc, ensure_ascii=False), durable=False)


@dataclass
class RunIssues:
    """A run's records by asset, in bucket order."""

    warnings: dict[str, list[BuildWarning]]
    failed: dict[str, list[FileError]]


def clear_run_issues(warehouse_root: Path) -> None:
    """Remove what builds that stopped before reading their records left behind."""
    shutil.rmtree(Path(warehouse_root) / RUN_ISSUES_DIR, ignore_errors=True)


def read_run_issues(warehouse_root: Path, run_id: str) -> RunIssues:
    """What `write_run_issues` wrote for the run (nothing when it wrote none), then the run's folder is removed."""
    folder = _run_dir(warehouse_root, run_id)
    out = RunIssues({}, {})
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        asset = path.name.rsplit(".", 2)[0]
        doc = json.loads(path.read_text(encoding="utf-8"))
        out.warnings.setdefault(asset, []).extend(BuildWarning.from_json(w) for w in doc["warnings"])
        out.failed.setdefault(asset, []).extend(FileError.from_json(f) for f in doc["failed"])
    shutil.rmtree(folder, ignore_errors=True)
    return out
