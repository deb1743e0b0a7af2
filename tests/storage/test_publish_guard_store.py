"""With `s3://` data the live snapshot is the store's: a build from a fresh staging folder whose corpus would
drop most of it is refused, and the store's `CURRENT` stays where it was."""

from __future__ import annotations

import pytest

from tests.pipeline.tiny_corpus import ARTICLES, build, write_corpus
from tests.storage.conftest import object_store

pytestmark = pytest.mark.slow  # builds a small corpus twice against the S3 test server


def test_the_shrink_guard_counts_the_stores_live_snapshot(s3_server, s3_bucket, tmp_path):
    corpus, home = write_corpus(tmp_path / "corpus"), tmp_path / "home"
    env = {**s3_server.env(s3_bucket), "PETRICHOR_LOCAL_DIR": str(tmp_path / "staging")}
    first = build(tmp_path / "staging", corpus, home, env=env)
    assert first["_exit_code"] == 0 and first["published"], first

    for relpath in list(ARTICLES)[1:]:
        (corpus / relpath).unlink()
    env["PETRICHOR_LOCAL_DIR"] = str(tmp_path / "another-builder")  # holds no copy of the live snapshot
    second = build(tmp_path / "another-builder", corpus, home, env=env)
    assert second["_exit_code"] == 1 and "would drop 2 of 3 articles" in second["failed_run"], second
    assert object_store(s3_server, s3_bucket).read_pointer().version == first["snapshot_version"]
