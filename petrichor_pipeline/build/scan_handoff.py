"""The planning scan of `petrichor build`, handed to the build's runs so the corpus is read once per build.

The CLI scans the corpus to plan (bucket data versions); its runs then work from that very listing instead
of scanning again in every run and every step process. The scan is written to a file under the data folder
named by the build, its path travels on the runs as a tag (`SCAN_TAG`), and the file is removed when the
build ends. A run without the tag (the UI, a sensor, a schedule) scans the corpus itself.
"""

from __future__ import annotations

import pickle
import uuid
from pathlib import Path

from petrichor_pipeline.sources.corpus import CorpusScan

SCAN_TAG = "petrichor/scan_file"


def scans_dir(data_dir: Path) -> Path:
    return Path(data_dir) / "cache" / "scans"


def write_scan(data_dir: Path, scan: CorpusScan) -> Path:
    """Store `scan` for this build's runs; returns the file to name in their tags."""
    path = scans_dir(data_dir) / f"{uuid.uuid4().hex}.pickle"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(scan, protocol=pickle.HIGHEST_PROTOCOL))
    tmp.replace(path)  # a run never reads half a file
    return path


def read_scan(path: Path) -> CorpusScan | None:
    """The handed-over scan, or None when the file is gone or unreadable (the run then scans itself)."""
    try:
        scan = pickle.loads(Path(path).read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None
    return scan if isinstance(scan, CorpusScan) else None


def remove_scan(path: Path | None) -> None:
    if path is not None:
        Path(path).unlink(missing_ok=True)
