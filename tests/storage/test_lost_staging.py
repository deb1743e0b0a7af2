"""`s3://` data whose local staging folder is lost while the Dagster instance survives: the next build
rebuilds from the corpus and publishes a whole snapshot to the store, never an empty one."""

from __future__ import annotations

import io
import shutil

import pyarrow.parquet as pq
import pytest

from tests.pipeline.tiny_corpus import build, corpus_articles, write_corpus
from tests.storage.conftest import object_store

pytestmark = pytest.mark.slow  # builds a small corpus twice against the S3 test server


def test_a_lost_staging_folder_is_rebuilt_not_published_empty(s3_server, s3_bucket, tmp_path):
    corpus, home = write_corpus(tmp_path / "corpus"), tmp_path / "home"
    staging = tmp_path / "staging"
    env = {**s3_server.env(s3_bucket), "PETRICHOR_LOCAL_DIR": str(staging)}
    first = build(staging, corpus, home, env=env)
    assert first["_exit_code"] == 0 and first["published"], first
    store = object_store(s3_server, s3_bucket)
    assert store.read_pointer().version == first["snapshot_version"]

    shutil.rmtree(staging)  # the builder's local folder is lost; the instance (its records) survives
    (corpus / "kb/ports.md").write_text("# Ports\n\nThe service listens on port 9000 now.\n", encoding="utf-8")
    second = build(staging, corpus, home, env=env)
    assert second["_exit_code"] == 0 and second["published"], second
    assert second["articles"]["built"] == 3, second["articles"]
    version = store.read_pointer().version
    assert version == second["snapshot_version"] != first["snapshot_version"]
    rows = pq.read_table(io.BytesIO(store.read_bytes("snapshots", version, "articles.parquet"))).to_pylist()
    assert {r["path"]: r["article_version"] for r in rows} == corpus_articles(staging, corpus)
