"""The text tables serving maps from `<table>.arrow` are the Parquet tables' rows, checked like every file."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from petrichor_core.contract.current import verify_snapshot
from petrichor_core.contract.manifest import MANIFEST_FILE, file_entry, read_manifest, read_table
from petrichor_core.contract.mapped import MAPPED_TABLES
from petrichor_serving.snapshot import load_snapshot
from tests.integrity.helpers import assert_refused_when_damaged, copy_built, current

pytestmark = pytest.mark.slow  # builds a corpus

SERVED_TEXTS = {"articles": "articles", "chunks": "chunks", "chunk_windows": "windows", "tree_nodes": "tree"}
"""Each mapped table's recall table, whose `contents` serving reads row by row from the table's `content`."""


def _served_text(snap, name: str) -> pa.ChunkedArray:
    return getattr(snap.recall, SERVED_TEXTS[name]).contents._column


def _mapped(column: pa.ChunkedArray) -> bool:
    """Whether a column's buffers are read-only views of a mapped file rather than memory Arrow decoded into."""
    return not any(b is not None and b.is_mutable for chunk in column.chunks for b in chunk.buffers())


def test_the_manifest_records_a_mapped_copy_of_each_text_table(built_corpus):
    data = built_corpus.data_dir
    version = current(data)
    folder = data / "snapshots" / version
    tables = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))["tables"]
    assert {name for name, info in tables.items() if "mapped" in info} == set(MAPPED_TABLES)
    for name, left_out in MAPPED_TABLES.items():
        entry = tables[name]["mapped"]
        assert entry["file"] == f"{name}.arrow"
        assert file_entry(folder / entry["file"]) == {"bytes": entry["bytes"], "sha256": entry["sha256"]}
        columns = pa.ipc.open_file(pa.memory_map(str(folder / entry["file"]))).schema.names
        assert columns == [c for c in pq.read_schema(folder / tables[name]["file"]).names if c not in left_out], name


def test_served_texts_are_the_parquet_rows_read_from_the_mapping(built_corpus, served_snapshot):
    snap, _ = served_snapshot
    snaps = built_corpus.data_dir / "snapshots"
    manifest = read_manifest(snaps, snap.version)
    for name in MAPPED_TABLES:
        served = _served_text(snap, name)
        assert served.num_chunks and _mapped(served), name
        assert served.equals(read_table(snaps, manifest, name).column("content")), name
        assert snap.tables[name].num_rows == manifest.tables[name]["rows"] > 0, name


def test_a_snapshot_without_mapped_copies_loads_from_its_parquet_files(built_corpus, served_snapshot, tmp_path):
    """A snapshot published before the copies existed serves the same rows, decoded from Parquet."""
    snap, embedder = served_snapshot
    data = copy_built(built_corpus, tmp_path)[0]
    version = current(data)
    path = data / "snapshots" / version / MANIFEST_FILE
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for name in MAPPED_TABLES:
        (data / "snapshots" / version / manifest["tables"][name].pop("mapped")["file"]).unlink()
    path.write_text(json.dumps(manifest), encoding="utf-8")
    verify_snapshot(data, version)
    old = load_snapshot(data, version, embed_fingerprint=embedder.fingerprint)
    for name in MAPPED_TABLES:
        assert not _mapped(_served_text(old, name)), name
        assert _served_text(old, name).equals(_served_text(snap, name)), name


@pytest.mark.parametrize("name", sorted(MAPPED_TABLES))
@pytest.mark.parametrize("damage", ["flip", "missing"])
def test_a_damaged_mapped_copy_is_refused_with_its_name(built_corpus, served_snapshot, tmp_path, name, damage):
    _, embedder = served_snapshot
    data = copy_built(built_corpus, tmp_path)[0]
    assert_refused_when_damaged(data, current(data), f"{name}.arrow", damage, embedder)
