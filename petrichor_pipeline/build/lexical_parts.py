"""The snapshot's lexical index assembled from per-bucket postings, so a publish re-tokenises only the buckets
that changed (and the cross-article wiki, which every build recomputes).

A bucket's postings (row numbers local to the bucket's slice of each indexed table) are cached in the
warehouse beside a signature of what they were computed from (data version, per-article build keys). Merging the buckets in bucket
order, with each bucket's rows shifted by the rows before it, gives exactly the index a build over the
whole snapshot gives: term ids follow first occurrence, and rows stay ascending inside each term.
"""

from __future__ import annotations

import hashlib
import json
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from petrichor_pipeline.build.warehouse import Warehouse
from petrichor_pipeline.contract import write_parquet_atomic
from petrichor_pipeline.text import lexical
from petrichor_pipeline.text.bm25 import BM25Index, postings
from petrichor_pipeline.text.tokenize import get_tokenizer

PARTS_VERSION = "1"
BUCKET_INDEXES = tuple(name for name in lexical.INDEXES if name != "wiki")
"""The indexes whose rows belong to one article each; the wiki index spans buckets and is rebuilt whole."""
SIGNED_ASSETS = ("articles", "chunks", "chunk_windows", "questions", "page_index")
"""The warehouse steps whose rows the bucket indexes read (articles for titles)."""

Postings = tuple[list[str], list[np.ndarray], list[np.ndarray]]


def signature(wh: Warehouse, bucket: str, tokenizer: str) -> str:
    """What a bucket's postings were computed from: the data version its articles were written from and the
    per-article build keys of the indexed steps (a bucket rewritten with every article reused keeps it)."""
    parts = [PARTS_VERSION, tokenizer, json.dumps((wh.read_json("articles", bucket) or {}).get("data_version"))]
    for asset in SIGNED_ASSETS[1:]:
        keys = (wh.read_json(asset, bucket) or {}).get("keys")
        parts.append(f"{asset}:{json.dumps(keys, sort_keys=True)}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def _from_table(table: pa.Table) -> dict[str, Postings]:
    out: dict[str, Postings] = {}
    names = np.asarray(table.column("index").to_pylist(), dtype=object)
    for name in BUCKET_INDEXES:
        part = table.filter(pa.array(names == name)) if len(names) else table
        rows_col, weights_col = part.column("rows").combine_chunks(), part.column("weights").combine_chunks()
        if not len(part):
            out[name] = ([], [], [])
            continue
        offsets = rows_col.offsets.to_numpy()
        offsets = offsets - offsets[0]
        flat_rows = rows_col.flatten().to_numpy(zero_copy_only=False)
        flat_weights = weights_col.flatten().to_numpy(zero_copy_only=False)
        cuts = list(zip(offsets[:-1].tolist(), offsets[1:].tolist()))
        out[name] = (part.column("term").to_pylist(), [flat_rows[a:b] for a, b in cuts], [flat_weights[a:b] for a, b in cuts])
    return out


def bucket_postings(wh: Warehouse, bucket: str, tables: Mapping[str, pa.Table], tokenizer: str) -> tuple[dict[str, Postings], bool]:
    """The bucket's postings per index, from the cache when its signature matches; (postings, reused)."""
    sig = signature(wh, bucket, tokenizer)
    path = wh.path("lexical_parts", bucket)
    if (wh.read_json("lexical_parts", bucket) or {}).get("signature") == sig and path.exists():
        try:
            return _from_table(pq.read_table(path)), True
        except (OSError, pa.ArrowInvalid, KeyError):
            pass
    tok = get_tokenizer(tokenizer)
    by_index = {name: postings(BM25Index.build(lexical.documents(name, tables), tok.index)) for name in BUCKET_INDEXES}
    write_parquet_atomic(lexical.postings_table(by_index), path)
    wh.write_json("lexical_parts", bucket, {"signature": sig})
    return by_index, False


def merged_table(parts: Sequence[tuple[dict[str, Postings], Mapping[str, int]]], tables: Mapping[str, pa.Table], tokenizer: str) -> pa.Table:
    """The `lexical_index` table: bucket postings merged in bucket order (`parts` carries each bucket's
    postings and its row count per index), the wiki index built over the whole wiki."""
    merged: dict[str, Postings] = {}
    for name in lexical.INDEXES:
        if name == "wiki":
            tok = get_tokenizer(tokenizer)
            merged[name] = postings(BM25Index.build(lexical.documents(name, tables), tok.index))
            continue
        acc: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        offset = 0
        for by_index, sizes in parts:
            terms, rows, weights = by_index[name]
            for term, r, w in zip(terms, rows, weights):
                slot = acc.get(term)
                if slot is None:
                    acc[term] = slot = ([], [])
                slot[0].append(r + offset if offset else r)
                slot[1].append(w)
            offset += sizes[name]
        merged[name] = (
            list(acc),
            [np.concatenate(r).astype(np.int32) if len(r) > 1 else r[0].astype(np.int32) for r, _ in acc.values()],
            [np.concatenate(w) if len(w) > 1 else w[0] for _, w in acc.values()],
        )
    return lexical.postings_table(merged)
