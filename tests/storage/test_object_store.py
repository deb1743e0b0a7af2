"""`PETRICHOR_DATA=s3://…`: builds publish to a real S3-compatible server, serving mirrors from it, and of two
publishers racing for `CURRENT` exactly one wins."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import threading

import pytest

from petrichor_core.contract.current import read_current
from petrichor_core.contract.manifest import MANIFEST_FILE
from petrichor_core.object_store import PublishConflict, SnapshotMirror, parse_location, publish_remote
from tests.conftest import isolated_env, run_cli_build
from tests.storage.conftest import object_store, stage_clone


def _copy_build(built_corpus, tmp_path):
    """The built corpus' data dir and Dagster instance, as a builder's staging folder already holding them."""
    staging, home = tmp_path / "staging", tmp_path / "dagster_home"
    shutil.copytree(built_corpus.data_dir, staging)
    shutil.copytree(built_corpus.dagster_home, home)
    return staging, home


def _cli_json(monkeypatch, env: dict[str, str], *argv: str) -> tuple[int, dict]:
    from petrichor.cli import main

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(list(argv))
    return code, json.loads(buf.getvalue())


def test_an_s3_uri_is_parsed_and_plain_http_goes_only_to_this_machine():
    loc = parse_location("s3://bkt/some/prefix/", endpoint_url="http://127.0.0.1:9000")
    assert (loc.bucket, loc.prefix, loc.key("snapshots", "CURRENT")) == ("bkt", "some/prefix", "some/prefix/snapshots/CURRENT")
    with pytest.raises(ValueError, match="https"):
        parse_location("s3://bkt/p", endpoint_url="http://storage.example.com")
    with pytest.raises(ValueError, match="only s3://"):
        parse_location("gs://bkt/p")


def test_build_publishes_to_s3_and_search_answers_from_a_mirror(built_corpus, s3_server, s3_bucket, tmp_path, monkeypatch):
    staging, home = _copy_build(built_corpus, tmp_path)
    env = {**s3_server.env(s3_bucket), "PETRICHOR_LOCAL_DIR": str(staging)}
    monkeypatch.chdir(tmp_path)
    summary = run_cli_build(staging, built_corpus.corpus_dir, home, env=env)
    assert summary["_exit_code"] == 0 and summary["published"], summary
    assert not (tmp_path / "s3:").exists()  # no local folder named after the URI

    store = object_store(s3_server, s3_bucket)
    version = summary["snapshot_version"]
    assert store.read_pointer().version == version == read_current(staging / "snapshots")
    files = set(store.list_files("snapshots", version))
    assert MANIFEST_FILE in files and "chunks.parquet" in files and any(f.endswith(".f32.npy") for f in files)
    assert store.list_files("history", "articles")

    replica = tmp_path / "replica-host"
    isolated_env(monkeypatch, staging, built_corpus.corpus_dir, home)
    code, doc = _cli_json(monkeypatch, {**s3_server.env(s3_bucket), "PETRICHOR_LOCAL_DIR": str(replica)}, "search", "--json", "Petrichor")
    assert code == 0 and doc["candidates"], doc
    assert read_current(replica / "replica" / "snapshots") == version

    again = run_cli_build(staging, built_corpus.corpus_dir, home, env=env)  # nothing changed: nothing published
    assert again["_exit_code"] == 0 and not again["published"]


def test_two_publishers_racing_for_current_exactly_one_wins(built_corpus, s3_server, s3_bucket, tmp_path):
    store = object_store(s3_server, s3_bucket)
    pointer = store.read_pointer()
    assert pointer.version is None
    stages = [tmp_path / "a", tmp_path / "b"]
    manifests = [stage_clone(built_corpus.data_dir, s, salt=s.name) for s in stages]
    outcomes: dict[str, BaseException | None] = {}
    start = threading.Barrier(2)

    def publisher(i: int) -> None:
        start.wait()
        try:
            publish_remote(object_store(s3_server, s3_bucket), stages[i], manifests[i], pointer)
            outcomes[manifests[i].version] = None
        except BaseException as exc:  # noqa: BLE001 - the loser's error is what the test checks
            outcomes[manifests[i].version] = exc

    threads = [threading.Thread(target=publisher, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    winners = [v for v, exc in outcomes.items() if exc is None]
    losers = {v: exc for v, exc in outcomes.items() if exc is not None}
    assert len(winners) == 1 and len(losers) == 1, outcomes
    ((loser, exc),) = losers.items()
    assert isinstance(exc, PublishConflict) and "another build published" in str(exc)
    assert store.read_pointer().version == winners[0]
    assert store.list_files("snapshots", loser) == []  # the loser's upload is gone: nothing half-published stays

    # the next publisher expects the winner's ETag; one holding the first (stale) pointer loses
    third = stage_clone(built_corpus.data_dir, tmp_path / "c", salt="c")
    with pytest.raises(PublishConflict):
        publish_remote(store, tmp_path / "c", third, pointer)
    publish_remote(store, tmp_path / "c", third, store.read_pointer())
    assert store.read_pointer().version == third.version


def test_a_build_that_loses_the_race_fails_clearly_and_publishes_nothing(built_corpus, s3_server, s3_bucket, tmp_path, monkeypatch):
    import petrichor_pipeline.builder.publish as publish_module

    staging, home = _copy_build(built_corpus, tmp_path)
    store = object_store(s3_server, s3_bucket)
    rival = stage_clone(built_corpus.data_dir, tmp_path / "rival", salt="rival")
    real = publish_module.publish_remote

    def rival_publishes_first(store_, data_dir, manifest, expected):
        publish_remote(store, tmp_path / "rival", rival, store.read_pointer())  # a second builder, through the real server
        return real(store_, data_dir, manifest, expected)

    monkeypatch.setattr(publish_module, "publish_remote", rival_publishes_first)
    summary = run_cli_build(staging, built_corpus.corpus_dir, home, env={**s3_server.env(s3_bucket), "PETRICHOR_LOCAL_DIR": str(staging)})
    assert summary["_exit_code"] == 1 and not summary["published"]
    assert "PublishConflict" in summary["failed_run"] and "another build published" in summary["failed_run"], summary["failed_run"]
    assert store.read_pointer().version == rival.version
    assert [f for f in store.list_files("snapshots", recursive=False) if f != "CURRENT"] == [rival.version]
    assert read_current(staging / "snapshots") == read_current(built_corpus.data_dir / "snapshots")  # staging's CURRENT unmoved


def test_a_mirror_refuses_a_download_that_differs_from_the_manifest(built_corpus, s3_server, s3_bucket, tmp_path):
    store = object_store(s3_server, s3_bucket)
    manifest = stage_clone(built_corpus.data_dir, tmp_path / "stage", salt="x")
    publish_remote(store, tmp_path / "stage", manifest, store.read_pointer())
    (tmp_path / "bad.parquet").write_bytes(b"not the chunks table")
    store.upload(tmp_path / "bad.parquet", "snapshots", manifest.version, "chunks.parquet")

    mirror = SnapshotMirror(store, tmp_path / "replica")
    with pytest.raises(ValueError, match="checksum"):
        mirror.sync()
    assert read_current(tmp_path / "replica" / "snapshots") is None  # never pointed at
    assert not (tmp_path / "replica" / "snapshots" / manifest.version / MANIFEST_FILE).exists()
