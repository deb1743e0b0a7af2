"""The publish check (`contract.current.verify_snapshot`) and serving's load (`load_snapshot`) read a snapshot
through one reader (`contract.reader`): a check the reader makes is made by both, and both refuse a damaged
snapshot with the same error, naming the file."""

from __future__ import annotations

import json

import pytest

from petrichor_core.contract import reader
from petrichor_core.contract.current import verify_snapshot
from petrichor_core.contract.manifest import MANIFEST_FILE, IntegrityError
from petrichor_core.contract.reader import FileCheck
from petrichor_serving.snapshot import load_snapshot
from tests.integrity.helpers import copy_built, current, damage_file

pytestmark = pytest.mark.slow  # builds a corpus


def _readers(data, embedder):
    return {
        "publish check": lambda version: verify_snapshot(data, version),
        "serving": lambda version: load_snapshot(data, version, embed_fingerprint=embedder.fingerprint),
    }


def test_a_check_added_to_the_reader_is_made_by_the_publish_check_and_by_serving(built_corpus, served_snapshot, monkeypatch):
    _, embedder = served_snapshot
    data = built_corpus.data_dir
    version = current(data)
    made: list[bool] = []

    def glossary(r: reader.SnapshotReader, every_file: bool):
        def run() -> None:
            made.append(every_file)
            raise IntegrityError("glossary.json: missing")

        yield FileCheck(("glossary", "file"), 0, run)

    monkeypatch.setattr(reader, "CHECKS", (*reader.CHECKS, glossary))
    for name, read in _readers(data, embedder).items():
        with pytest.raises(IntegrityError, match="glossary.json: missing"):
            read(version)
    assert made == [True, False], "the publish check checks every file, serving what it serves"
    monkeypatch.undo()
    for read in _readers(data, embedder).values():
        read(version)


def _files(manifest: dict) -> dict[str, str]:
    """One file of each kind the reader checks: a parsed table, a mapped copy, the mapped postings, a compact
    vector file."""
    vectors = next(iter(manifest["vector_tables"].values()))
    return {
        "parquet": manifest["tables"]["chunks"]["file"],
        "mapped copy": manifest["tables"]["articles"]["mapped"]["file"],
        "postings": next(iter(manifest["lexical"]["files"].values()))["file"],
        "vectors": next(iter(vectors["compact"]["files"].values()))["file"],
    }


@pytest.mark.parametrize("kind", ["parquet", "mapped copy", "postings", "vectors"])
@pytest.mark.parametrize("damage", ["flip", "missing"])
def test_both_refuse_a_damaged_file_with_the_same_error(built_corpus, served_snapshot, tmp_path, kind, damage):
    _, embedder = served_snapshot
    data = copy_built(built_corpus, tmp_path)[0]
    version = current(data)
    manifest = json.loads((data / "snapshots" / version / MANIFEST_FILE).read_text(encoding="utf-8"))
    file = _files(manifest)[kind]
    damage_file(data / "snapshots" / version / file, damage)
    refusals = {}
    for name, read in _readers(data, embedder).items():
        with pytest.raises(IntegrityError) as exc:
            read(version)
        refusals[name] = str(exc.value)
    assert refusals["publish check"] == refusals["serving"]
    assert file in refusals["serving"] and ("missing" if damage == "missing" else "corrupted") in refusals["serving"]


def test_both_refuse_a_manifest_of_another_schema_version_alike(built_corpus, served_snapshot, tmp_path):
    _, embedder = served_snapshot
    data = copy_built(built_corpus, tmp_path)[0]
    version = current(data)
    path = data / "snapshots" / version / MANIFEST_FILE
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["schema_version"] = -1
    path.write_text(json.dumps(manifest), encoding="utf-8")
    refusals = set()
    for read in _readers(data, embedder).values():
        with pytest.raises(IntegrityError, match="unsupported snapshot schema_version") as exc:
            read(version)
        refusals.add(str(exc.value))
    assert len(refusals) == 1
