"""The BM25 postings serving maps from `lexical_index.arrow` are the Parquet table's, checked like every file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from petrichor_core.contract.lexical_files import LEXICAL_FILES
from petrichor_core.contract.manifest import MANIFEST_FILE, file_entry, read_manifest, read_table
from petrichor_core.contract.schemas import SCHEMAS
from petrichor_core.text import lexical
from petrichor_serving.snapshot import INDEX_ONLY, load_snapshot
from tests.integrity.helpers import assert_refused_when_damaged, copy_built, current

pytestmark = pytest.mark.slow  # builds a corpus


def test_the_manifest_records_the_mapped_files(built_corpus):
    data = built_corpus.data_dir
    version = current(data)
    files = json.loads((data / "snapshots" / version / MANIFEST_FILE).read_text(encoding="utf-8"))["lexical"]["files"]
    assert set(files) == set(LEXICAL_FILES)
    for kind, entry in files.items():
        assert entry["file"] == LEXICAL_FILES[kind]
        assert file_entry(data / "snapshots" / version / entry["file"]) == {"bytes": entry["bytes"], "sha256": entry["sha256"]}


def test_mapped_postings_equal_the_parquet_table(built_corpus, served_snapshot):
    snap, _ = served_snapshot
    snaps = built_corpus.data_dir / "snapshots"
    manifest = read_manifest(snaps, snap.version)
    tables = {name: read_table(snaps, manifest, name) for name in (*lexical.INDEXES.values(), "lexical_index")}
    from_parquet = lexical.from_table(tables["lexical_index"], lexical.sizes(tables))
    assert set(snap.recall.bm25) == set(from_parquet)
    for name, want in from_parquet.items():
        got = snap.recall.bm25[name]
        assert got.vocab == want.vocab, name
        for field in ("indptr", "indices", "data", "lengths"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), (name, field)
            assert getattr(got, field).dtype == getattr(want, field).dtype, (name, field)
    chunk = snap.recall.bm25["chunk"]
    assert chunk.indices.base is not None and not chunk.indices.flags.owndata  # a view of the mapped file


def test_tables_decode_their_index_text_on_demand(served_snapshot):
    snap, _ = served_snapshot
    for name in INDEX_ONLY:  # loaded without them; asked for, the table is whole
        assert snap.tables[name].schema.equals(SCHEMAS[name]), name
        assert snap.tables[name].num_rows == snap.manifest.tables[name]["rows"], name


@pytest.mark.parametrize("kind", sorted(LEXICAL_FILES))
@pytest.mark.parametrize("damage", ["flip", "missing"])
def test_a_damaged_mapped_file_is_refused_with_its_name(built_corpus, served_snapshot, tmp_path, kind, damage):
    _, embedder = served_snapshot
    data = copy_built(built_corpus, tmp_path)[0]
    assert_refused_when_damaged(data, current(data), LEXICAL_FILES[kind], damage, embedder)


def test_postings_of_another_tokenizer_revision_are_not_served(built_corpus, served_snapshot, tmp_path, monkeypatch):
    """A snapshot whose postings an older tokenizer wrote is searched with postings built at load instead."""
    from petrichor_core.text.tokenize import get_tokenizer
    from petrichor_serving.recall import index as recall_index

    snap, embedder = served_snapshot
    assert snap.manifest.lexical["tokenizer_revision"] == get_tokenizer(snap.manifest.lexical["tokenizer"]).revision
    data = copy_built(built_corpus, tmp_path)[0]
    version = current(data)
    path = data / "snapshots" / version / MANIFEST_FILE
    manifest = json.loads(path.read_text(encoding="utf-8"))
    del manifest["lexical"]["tokenizer_revision"]  # as written before revisions were recorded
    path.write_text(json.dumps(manifest), encoding="utf-8")
    built = []
    original = recall_index.build_indexes
    monkeypatch.setattr(recall_index, "build_indexes", lambda *a, **k: built.append(1) or original(*a, **k))
    old = load_snapshot(data, version, embed_fingerprint=embedder.fingerprint)
    assert built == [1]
    rebuilt = old.recall.bm25["chunk"]
    assert rebuilt.vocab == snap.recall.bm25["chunk"].vocab  # this corpus has no markup: the same postings
    assert np.array_equal(rebuilt.indices, snap.recall.bm25["chunk"].indices)
