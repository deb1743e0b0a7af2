"""Embedding steps: chunk and window vectors, then question vectors, never embedding the same text twice.

Only the tables search reads are embedded (`route_tables.searched_vector_tables`): the question vectors of
the offline model's questions are not, and their step writes an empty table. Vectors are keyed by
(embedding fingerprint, content hash of the index text). A text already embedded under the current
fingerprint — in this bucket's previous output or in the embedding cache on disk (read once per run) — is
reused; a vector with another fingerprint is ignored, so switching models re-embeds. The rest is embedded
once per distinct text, in batches of similar length (`models.embedding.length_batches`), as many batches
at a time as the embedder sends at once (its `concurrency`). A failed embedding call leaves the affected
rows pending (absent) and the next run retries them. Only an article's first chunks and windows are
embedded (`text.limits.MAX_EMBEDDED`), so one outsized file cannot hold the build back.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyarrow as pa

from petrichor_core.contract.route_tables import searched_vector_tables
from petrichor_core.contract.schemas import SCHEMAS, vector_schema
from petrichor_core.models.embedding import length_batches
from petrichor_core.text.limits import embedded_rows
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.incremental import BucketResult
from petrichor_pipeline.builder.issues import BuildWarning

SOURCES = {"chunk": ("chunks", "chunk_id"), "window": ("chunk_windows", "window_id"), "question": ("questions", "question_id")}
"""Kind -> the warehouse asset whose index texts are embedded and its id column. A window that is its whole
chunk has the chunk's index text, so its vector comes from the cache the chunk step filled."""


def vectors_step(ctx: BuildContext, bucket: str, kind: str) -> BucketResult:
    started = time.perf_counter()
    source_asset, id_col = SOURCES[kind]
    asset = f"{kind}_vectors"
    wh = ctx.warehouse
    embedder = ctx.embedder()
    warnings: list[BuildWarning] = []
    embedded = 0
    if embedder is None:  # switched off: nothing is pending, nothing to retry
        return _pending(ctx, bucket, asset, [], "", started)
    rows: list[dict[str, Any]] = []  # a table no route searches: nothing to embed, no vectors left to publish
    if asset in searched_vector_tables(ctx.settings.question_routes, ctx.chat().fingerprint):
        source = wh.read(source_asset, bucket, SCHEMAS[source_asset])
        rows = [] if source is None else embedded_rows(kind, source.to_pylist())
    try:
        fp = embedder.fingerprint
        dim = embedder.dim
    except Exception as exc:  # an unreachable endpoint must not fail the build
        return _pending(ctx, bucket, asset, rows, f"embedder unavailable: {exc}", started)

    schema = vector_schema(dim)
    available: dict[str, np.ndarray] = {}
    prev = wh.read(asset, bucket) if rows else None
    if prev is not None and prev.num_rows and "fingerprint" in prev.column_names:
        for h, f, v in zip(prev.column("content_hash").to_pylist(), prev.column("fingerprint").to_pylist(), prev.column("vector").to_pylist()):
            if f == fp and len(v) == dim:
                available[h] = np.asarray(v, dtype=np.float32)

    blocked = False
    if kind == "question" and rows:
        chunk_rows = wh.read("chunks", bucket, SCHEMAS["chunks"])
        chunk_vecs = wh.read("chunk_vectors", bucket)
        have = set(chunk_vecs.column("id").to_pylist()) if chunk_vecs is not None and chunk_vecs.num_rows else set()
        want = set(chunk_rows.column("chunk_id").to_pylist()) if chunk_rows is not None else set()
        if want - have:
            blocked = True
            warnings.append(BuildWarning(f"{len(want - have)} chunk vectors pending; question vectors wait for them (two-phase rule)"))

    if not blocked:
        cache = ctx.embedding_cache(fp)
        todo: dict[str, str] = {}
        for r in rows:
            h = r["content_hash"]
            if h in available or h in todo:
                continue
            cached = cache.get(h)
            if cached is not None and len(cached) == dim:
                available[h] = cached
            else:
                todo[h] = r["index_text"]
        hashes = list(todo)
        with ctx.counter.counting(asset, "embedding", len(hashes)) as counted:
            for part in _waves(hashes, todo, ctx.settings.limits.embed_batch_size * max(1, getattr(embedder, "concurrency", 1))):
                try:
                    mat = embedder.embed_passages([todo[h] for h in part])
                except Exception as exc:
                    warnings.append(BuildWarning(f"embedding failed, {len(hashes) - embedded} texts left pending for the next run: {exc}"))
                    break
                if mat.shape != (len(part), dim):
                    warnings.append(BuildWarning(f"embedding reply has shape {mat.shape}, expected ({len(part)}, {dim}); left pending"))
                    break
                new = {h: np.asarray(v, dtype=np.float32) for h, v in zip(part, mat)}
                cache.add(new)
                available.update(new)
                embedded += len(part)
                counted(len(part))

    out_rows = [
        {
            "id": r[id_col],
            "article_id": r["article_id"],
            "kb_id": r["kb_id"],
            "tenant": r["tenant"],
            "content_hash": r["content_hash"],
            "fingerprint": fp,
            "vector": available[r["content_hash"]].tolist(),
        }
        for r in rows
        if r["content_hash"] in available
    ]
    table = pa.Table.from_pylist(out_rows, schema=schema)
    wh.write(asset, table, bucket)
    result = BucketResult(asset, bucket, table, warnings=warnings)
    result.extra = {"embedded_texts": embedded, "pending": len(rows) - len(out_rows), "fingerprint": fp}
    result.seconds = time.perf_counter() - started
    return result


def _waves(hashes: list[str], todo: dict[str, str], size: int) -> list[list[str]]:
    """The hashes to embed in calls of up to `size` texts, similar lengths together: one call is as many
    batches as the embedder sends at once (`concurrency` × `embed_batch_size`), and a call that fails
    leaves its texts and every later call's pending, the earlier calls' vectors kept."""
    return [[hashes[i] for i in wave] for wave in length_batches([todo[h] for h in hashes], size)]


def _pending(ctx: BuildContext, bucket: str, asset: str, rows: list, reason: str, started: float) -> BucketResult:
    """Keep the previous vectors file untouched and report every row as pending."""
    prev = ctx.warehouse.read(asset, bucket)
    table = prev if prev is not None else pa.table({})
    result = BucketResult(asset, bucket, table, warnings=[BuildWarning(reason)] if reason else [])
    result.extra = {"embedded_texts": 0, "pending": len(rows), "fingerprint": ""}
    result.seconds = time.perf_counter() - started
    return result
