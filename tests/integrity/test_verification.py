"""A snapshot is served only when its files, vector tables and article versions match its manifest."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from petrichor_core.contract.current import verify_snapshot
from petrichor_core.contract.files import write_text_atomic
from petrichor_core.contract.manifest import MANIFEST_FILE, IntegrityError, file_entry
from petrichor_core.contract.mapped import write_ipc
from petrichor_core.contract.schemas import SCHEMAS
from petrichor_core.contract.vectors import open_vector_table, vector_digest
from petrichor_serving.snapshot import load_snapshot
from tests.conftest import run_cli_build
from tests.integrity.helpers import answers, assert_complete, client_for, copy_built, current, served_answers

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess


def _manifest(data, version):
    return json.loads((data / "snapshots" / version / MANIFEST_FILE).read_text(encoding="utf-8"))


def _write_manifest(data, version, manifest) -> None:
    (data / "snapshots" / version / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")


def _clone(data, src: str, dst: str) -> None:
    shutil.copytree(data / "snapshots" / src, data / "snapshots" / dst)
    manifest = _manifest(data, dst)
    manifest["version"], manifest["parent_version"] = dst, src
    _write_manifest(data, dst, manifest)


def _load(data, version, embedder):
    return load_snapshot(data, version, embed_fingerprint=embedder.fingerprint)


def test_the_manifest_records_what_loading_verifies(built_corpus, served_snapshot):
    snap, _ = served_snapshot
    data, version = built_corpus.data_dir, snap.version
    manifest = _manifest(data, version)
    assert set(manifest["tables"]) == set(SCHEMAS)
    for name, info in manifest["tables"].items():
        assert {"file", "rows", "bytes", "sha256"} <= set(info)
        assert file_entry(data / "snapshots" / version / info["file"]) == {"bytes": info["bytes"], "sha256": info["sha256"]}
    assert manifest["vector_tables"], "the bundled build embeds"
    for info in manifest["vector_tables"].values():
        assert vector_digest(open_vector_table(data / "lance", info).to_arrow()) == info["sha256"]
    verify_snapshot(data, version)


@pytest.fixture()
def private_copy(built_corpus, tmp_path):
    return copy_built(built_corpus, tmp_path)


@pytest.mark.parametrize("damage", ["flip", "truncate", "missing"])
def test_a_damaged_file_is_refused_with_its_name(private_copy, served_snapshot, damage):
    _, embedder = served_snapshot
    data = private_copy[0]
    version = current(data)
    for name in SCHEMAS:
        path = data / "snapshots" / version / f"{name}.parquet"
        original = path.read_bytes()
        if damage == "flip":
            raw = bytearray(original)
            raw[len(raw) // 2] ^= 0x01
            path.write_bytes(bytes(raw))
        elif damage == "truncate":
            path.write_bytes(original[: len(original) // 2])
        else:
            path.unlink()
        with pytest.raises((IntegrityError, FileNotFoundError)) as exc:
            _load(data, version, embedder)
        assert damage == "missing" or f"{name}.parquet" in str(exc.value)
        with pytest.raises(IntegrityError):
            verify_snapshot(data, version)
        path.write_bytes(original)
    assert _load(data, version, embedder).version == version


@pytest.mark.parametrize("served_from", ["mapped copy", "parquet"])
def test_altered_article_text_is_refused_even_with_a_matching_checksum(private_copy, served_snapshot, served_from):
    """Whichever file serving reads the articles from (`articles.arrow`, or the Parquet file of a snapshot
    without mapped copies), text that no longer hashes to its `article_version` is refused."""
    _, embedder = served_snapshot
    data = private_copy[0]
    version = current(data)
    folder = data / "snapshots" / version
    manifest = _manifest(data, version)
    mapped = manifest["tables"]["articles"].pop("mapped")
    if served_from == "mapped copy":
        manifest["tables"]["articles"]["mapped"] = mapped
        table = pa.ipc.open_file(pa.memory_map(str(folder / mapped["file"]))).read_all()
    else:
        (folder / mapped["file"]).unlink()
        table = pq.read_table(folder / "articles.parquet")
    contents = table.column("content").to_pylist()
    contents[0] = contents[0].replace("e", "a", 1)
    table = table.set_column(table.schema.get_field_index("content"), "content", pa.array(contents, pa.string()))
    if served_from == "mapped copy":  # a checksum re-stamped over the altered file
        manifest["tables"]["articles"]["mapped"] = write_ipc(folder / mapped["file"], table)
    else:
        pq.write_table(table, folder / "articles.parquet", compression="zstd")
        manifest["tables"]["articles"].update(file_entry(folder / "articles.parquet"))
    _write_manifest(data, version, manifest)
    with pytest.raises(IntegrityError, match="article_version"):
        _load(data, version, embedder)


@pytest.mark.parametrize("field,value", [("version", 10_000), ("rows", 1), ("sha256", "0" * 64)])
def test_a_vector_table_that_differs_from_the_manifest_is_refused(private_copy, served_snapshot, field, value):
    _, embedder = served_snapshot
    data = private_copy[0]
    version = current(data)
    manifest = _manifest(data, version)
    manifest["vector_tables"]["chunk_vectors"][field] = value
    _write_manifest(data, version, manifest)
    with pytest.raises(IntegrityError, match="vector table"):
        _load(data, version, embedder)


def test_a_manifest_without_checksums_is_refused(private_copy, served_snapshot):
    _, embedder = served_snapshot
    data = private_copy[0]
    version = current(data)
    manifest = _manifest(data, version)
    del manifest["tables"]["chunks"]["sha256"]
    _write_manifest(data, version, manifest)
    with pytest.raises(IntegrityError, match="no checksum recorded for chunks"):
        _load(data, version, embedder)


def test_no_snapshot_is_degraded(tmp_path, served_snapshot):
    _, embedder = served_snapshot
    with client_for(tmp_path / "data", embedder) as client:
        res = client.get("/healthz")
    assert res.status_code == 503
    assert res.json()["status"] == "degraded" and res.json()["snapshot_version"] is None
    assert "petrichor build" in res.json()["reason"]


def test_a_bad_current_falls_back_reports_degraded_and_the_next_build_repairs_it(built_corpus, private_copy, served_snapshot):
    _, embedder = served_snapshot
    data, corpus, home = private_copy
    old = current(data)
    healthy_version, healthy = served_answers(built_corpus.data_dir, embedder)
    assert healthy_version == old

    bad = old[:-6] + "zzzzzz"  # newer than `old`, so it is what a restart finds first
    _clone(data, old, bad)
    chunks = data / "snapshots" / bad / "chunks.parquet"
    chunks.write_bytes(chunks.read_bytes()[:-100])
    write_text_atomic(data / "snapshots" / "CURRENT", bad + "\n")

    with client_for(data, embedder) as client:
        res = client.get("/healthz")
        assert res.status_code == 503, res.text
        doc = res.json()
        assert doc["status"] == "degraded" and doc["snapshot_version"] == old
        assert bad in doc["reason"] and "chunks.parquet" in doc["reason"]
        status = client.get("/api/snapshot").json()
        assert status["refused"]["version"] == bad and status["current"]["version"] == old
        assert answers(client) == healthy  # the fallback answers exactly as the intact snapshot did

    summary = run_cli_build(data, corpus, home)  # nothing changed in the corpus: only CURRENT is bad
    assert summary["_exit_code"] == 0 and summary["published"], summary
    assert current(data) not in (old, bad)
    assert_complete(data)
    with client_for(data, embedder) as client:
        res = client.get("/healthz")
        assert res.status_code == 200 and res.json() == {"status": "ok", "snapshot_version": current(data)}


def test_loading_hashes_every_file_the_manifest_names(built_corpus, served_snapshot, monkeypatch):
    """The load hashes its files on several threads, largest first (`snapshot._verify_jobs`): none is left out."""
    import petrichor_core.contract.manifest as manifest_module

    snap, embedder = served_snapshot
    data, version = built_corpus.data_dir, snap.version
    manifest = _manifest(data, version)
    named = {info["file"] for info in manifest["tables"].values()}
    named |= {info["mapped"]["file"] for info in manifest["tables"].values() if "mapped" in info}
    named |= {entry["file"] for entry in manifest["lexical"]["files"].values()}
    named |= {entry["file"] for info in manifest["vector_tables"].values() for entry in info["compact"]["files"].values()}
    checked: list[str] = []
    real = manifest_module.check_entry

    def spy(info, size, sha256):
        checked.append(info["file"])
        real(info, size, sha256)

    monkeypatch.setattr(manifest_module, "check_entry", spy)
    _load(data, version, embedder)
    assert named <= set(checked), sorted(named - set(checked))
    assert len(checked) == len(set(checked)), "a file hashed twice"
