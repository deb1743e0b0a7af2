"""The `[[...]]` links of page bodies, kept between checks by the sha256 of each body's text.

The wiki lint reads the links of every page (1.5 million links in 238 MB of pages at 10,000 articles: 0.9 s
of regular expressions), while a build edits a few hundred of its 24,000 pages. A body with the digest of
one cached has the links cached with it, so only new texts are scanned. The cache is the body texts of the
last check (`<data>/cache/body_links.arrow`, replaced whole); one that cannot be read counts as empty.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa

from petrichor_core.contract.files import write_atomic
from petrichor_pipeline.builder.warehouse import CACHE_OPTIONS
from petrichor_pipeline.knowledge.wiki_links import body_link_lists

CACHE_SCHEMA = pa.schema([("digest", pa.binary(32)), ("targets", pa.list_(pa.string()))])


def linked_lists(bodies: pa.Array | pa.ChunkedArray, cache: Path | None = None) -> pa.ListArray:
    """Each body's link targets in order of appearance (`wiki_links.linked_keys`; none for a null body), one
    list per row; `cache` is read for the bodies seen before and rewritten when any body is new."""
    column = bodies.combine_chunks() if isinstance(bodies, pa.ChunkedArray) else bodies
    if pa.types.is_large_string(column.type):
        column = column.cast(pa.string())
    if cache is None:
        return body_link_lists(column)
    digests = _digests(column)
    known, cached = _read(cache)
    new_rows = [row for row, digest in enumerate(digests) if digest not in known]
    fresh = body_link_lists(column if len(new_rows) == len(column) else column.take(pa.array(new_rows, pa.int64())))
    position = {row: len(cached) + i for i, row in enumerate(new_rows)}
    picks = [position[row] if row in position else known[digest] for row, digest in enumerate(digests)]
    lists = pa.concat_arrays([cached, fresh]).take(pa.array(picks, pa.int64())) if digests else fresh
    if new_rows or len(known) != len(set(digests)):
        _write(cache, digests, lists)
    return lists


def _digests(column: pa.StringArray) -> list[bytes]:
    """sha256 of each row's UTF-8 bytes (a null row hashes as empty), read off the column's buffers."""
    if not len(column):
        return []
    _, offsets_buffer, data = column.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[column.offset : column.offset + len(column) + 1].tolist()
    text = memoryview(data) if data is not None else memoryview(b"")
    valid = column.is_valid().to_numpy(zero_copy_only=False) if column.null_count else None
    return [hashlib.sha256(text[offsets[row] : offsets[row + 1]] if valid is None or valid[row] else b"").digest() for row in range(len(column))]


def _read(cache: Path) -> tuple[dict[bytes, int], pa.ListArray]:
    empty = pa.array([], CACHE_SCHEMA.field("targets").type)
    if not cache.exists():
        return {}, empty
    try:
        table = pa.ipc.open_file(pa.memory_map(str(cache))).read_all()
    except (OSError, pa.ArrowInvalid):
        return {}, empty
    if not table.schema.equals(CACHE_SCHEMA):
        return {}, empty
    targets = table.column("targets").combine_chunks()
    return {digest: i for i, digest in enumerate(table.column("digest").to_pylist())}, targets


def _write(cache: Path, digests: list[bytes], lists: pa.ListArray) -> None:
    """The cache of these bodies alone, each distinct text once: a cache, so written without a flush."""
    first: dict[bytes, int] = {}
    for row, digest in enumerate(digests):
        first.setdefault(digest, row)
    table = pa.table(
        {"digest": pa.array(list(first), pa.binary(32)), "targets": lists.take(pa.array(list(first.values()), pa.int64()))}, schema=CACHE_SCHEMA
    )

    def write(tmp: str) -> None:
        with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, CACHE_SCHEMA, options=CACHE_OPTIONS) as writer:
            writer.write_table(table)

    write_atomic(cache, write, durable=False)
