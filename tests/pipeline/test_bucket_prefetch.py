"""A snapshot staged from the buckets a build prefetched is the one its step would have read itself."""

from __future__ import annotations

import time

import pytest

from petrichor_pipeline.builder import bucket_prefetch, publish
from petrichor_pipeline.builder.publish import stage_snapshot
from petrichor_pipeline.builder.warehouse import Warehouse
from petrichor_pipeline.resources import build_context
from tests.conftest import isolated_env
from tests.pipeline.tiny_corpus import copy_tree


def test_a_prefetched_snapshot_has_the_files_of_one_read_in_the_step(tiny_build, tmp_path, monkeypatch):
    corpus, data, home = (copy_tree(tiny_build / name, tmp_path / name) for name in ("corpus", "data", "home"))
    isolated_env(monkeypatch, data, corpus, home)
    ctx = build_context(str(data), str(corpus))
    plain = stage_snapshot(ctx, bucket_versions={"00": "a"})

    reads, read_buckets = [], publish.read_buckets
    monkeypatch.setattr(bucket_prefetch, "read_buckets", lambda c, pool: reads.append(1) or read_buckets(c, pool))
    monkeypatch.setattr(publish, "read_buckets", lambda c, pool: (_ for _ in ()).throw(AssertionError("read again")))
    bucket_prefetch.start(ctx, "a" * 32)
    bucket_prefetch.start(ctx, "a" * 32)  # started once
    taken = bucket_prefetch.take("a" * 32)
    assert taken is not None and bucket_prefetch.take("b" * 32) is None and bucket_prefetch.take(None) is None
    assert bucket_prefetch.take("a" * 32) is None  # taken once: a retried step reads for itself
    prefetched = stage_snapshot(ctx, bucket_versions={"00": "b"}, prefetched=taken)
    bucket_prefetch.drop("a" * 32)

    assert reads == [1] and bucket_prefetch.take("a" * 32) is None
    assert prefetched.version != plain.version
    assert prefetched.tables == plain.tables  # every file's bytes and sha256, rows and mapped copies
    assert prefetched.lexical == plain.lexical


def test_a_failed_prefetch_fails_the_step_that_uses_it_and_is_dropped(tiny_build, tmp_path, monkeypatch):
    corpus, data, home = (copy_tree(tiny_build / name, tmp_path / name) for name in ("corpus", "data", "home"))
    isolated_env(monkeypatch, data, corpus, home)
    ctx = build_context(str(data), str(corpus))

    def broken(c, pool):
        raise OSError("bucket file unreadable")

    monkeypatch.setattr(bucket_prefetch, "read_buckets", broken)
    bucket_prefetch.start(ctx, "c" * 32)
    try:
        stage_snapshot(ctx, bucket_versions={"00": "c"}, prefetched=bucket_prefetch.take("c" * 32))
    except OSError as exc:
        assert "unreadable" in str(exc)
    else:
        raise AssertionError("the step staged a snapshot from failed reads")
    bucket_prefetch.drop("c" * 32)
    assert bucket_prefetch.take("c" * 32) is None
    assert [p.name for p in ctx.settings.snapshots_dir.iterdir() if p.is_dir()] == [
        p.name for p in (tiny_build / "data" / ctx.settings.snapshots_dir.relative_to(data)).iterdir() if p.is_dir()
    ]  # no partial folder is left


def test_a_step_that_fails_before_it_reads_waits_for_the_prefetch(tiny_build, tmp_path, monkeypatch):
    """The prefetch writes the postings caches: a step that fails first still outlasts it, so the build's
    lock never goes while it runs."""
    corpus, data, home = (copy_tree(tiny_build / name, tmp_path / name) for name in ("corpus", "data", "home"))
    isolated_env(monkeypatch, data, corpus, home)
    ctx = build_context(str(data), str(corpus))
    finished, read_buckets, read = [], publish.read_buckets, Warehouse.read

    def slow(c, pool):
        time.sleep(0.5)
        reads = read_buckets(c, pool)
        finished.append(1)
        return reads

    def no_wiki(self, asset, *args, **kwargs):
        if asset == "wiki_pages":
            raise OSError("wiki unreadable")
        return read(self, asset, *args, **kwargs)

    monkeypatch.setattr(bucket_prefetch, "read_buckets", slow)
    monkeypatch.setattr(Warehouse, "read", no_wiki)
    bucket_prefetch.start(ctx, "d" * 32)
    with pytest.raises(OSError, match="wiki unreadable"):
        stage_snapshot(ctx, bucket_versions={"00": "d"}, prefetched=bucket_prefetch.take("d" * 32))
    assert finished == [1]
    bucket_prefetch.drop("d" * 32)
