"""A full disk says so, with the path, however the writer reports it: numpy's short write ("172032 requested
and 21472 written", no errno), an errno of ENOSPC, or LanceDB's `(os error 28)` all become `OSError(ENOSPC)`
naming the file (`contract.files.disk_full`), which the build reports as "the disk is full"; nothing is lost
and the previous snapshot keeps serving. The short write is simulated at the writer."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from petrichor_core.contract.files import disk_full, write_atomic, write_text_atomic
from petrichor_pipeline.runner import describe_failure, failure_advice
from tests.pipeline.snapshot_io import current_version
from tests.pipeline.tiny_corpus import build, copy_tree, published_articles

SHORT_WRITE = OSError("172032 requested and 21472 written")
"""What numpy's `ndarray.tofile` (`np.save` on a real file) raises when the disk fills mid-write."""


def _short_write(tmp: str) -> None:
    Path(tmp).write_bytes(b"\x93NUMPY partial")
    raise SHORT_WRITE


def test_a_short_write_is_a_full_disk_naming_the_file_and_the_old_file_stays(tmp_path: Path) -> None:
    path = tmp_path / "chunk_vectors.f32.npy"
    write_text_atomic(path, "the previous file")
    with pytest.raises(OSError) as caught:
        write_atomic(path, _short_write)
    assert (caught.value.errno, caught.value.filename) == (errno.ENOSPC, str(path))
    assert "172032 requested and 21472 written" in caught.value.strerror  # what was short, kept
    assert failure_advice(describe_failure(caught.value)).startswith(
        f"the disk is full: OSError: No space left on device (172032 requested and 21472 written) ({path})"
    )
    assert path.read_text() == "the previous file" and [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left


def test_only_a_full_disk_is_reported_as_one(tmp_path: Path) -> None:
    lance = RuntimeError("lance error: LanceError(IO): No space left on device (os error 28), structural.rs:191:9")
    for reported in (OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device"), lance, SHORT_WRITE):
        full = disk_full(reported, tmp_path / "x")
        assert full is not None and full.errno == errno.ENOSPC and full.filename == str(tmp_path / "x"), reported
    for other in (OSError(errno.EACCES, "Permission denied"), OSError("3 requested"), RuntimeError("lance error: not found"), ValueError("bad")):
        assert disk_full(other, tmp_path / "x") is None, other
    with pytest.raises(PermissionError):  # any other failure passes through as it was
        write_atomic(tmp_path / "y", lambda tmp: (_ for _ in ()).throw(PermissionError(errno.EACCES, "Permission denied")))


@pytest.mark.slow  # builds a small corpus
def test_a_short_write_while_publishing_refuses_the_build_and_keeps_current(tiny_build, tmp_path, monkeypatch) -> None:
    corpus, data, home = (copy_tree(tiny_build / name, tmp_path / name) for name in ("corpus", "data", "home"))
    (corpus / "kb/ports.md").write_text("# Ports\n\nThe service listens on port 9000 now.\n", encoding="utf-8")
    before, served = current_version(data), published_articles(data)
    import pyarrow.parquet as pq

    real = pq.write_table

    def short_in_snapshots(table, where, **kwargs):  # the disk fills as the snapshot's tables are written
        if "snapshots" in Path(where).parts:
            _short_write(where)
        return real(table, where, **kwargs)

    monkeypatch.setattr(pq, "write_table", short_in_snapshots)
    summary = build(data, corpus, home)
    assert summary["_exit_code"] == 1 and not summary["published"], summary
    [error] = [e["reason"] for e in summary["errors"] if e["reason"].startswith("the disk is full")]
    assert "No space left on device (172032 requested and 21472 written)" in error and f"{data}/snapshots/" in error, error
    assert current_version(data) == before and published_articles(data) == served  # the previous snapshot serves
    assert sorted(p.name for p in (data / "snapshots").iterdir() if p.is_dir()) == [before]  # no partial folder

    monkeypatch.setattr(pq, "write_table", real)  # space freed: the next build publishes the edit, nothing lost
    again = build(data, corpus, home)
    assert again["_exit_code"] == 0 and again["published"] and published_articles(data)["kb/ports.md"] != served["kb/ports.md"]
