"""The one atomic writer: every file the build, serving or the store writes for a reader goes through it.

A file is written under a temporary name in its own folder, flushed to disk, then renamed over the final
name, so a reader (another process, or the next build after a crash) sees the old file or the whole new
one, never half of either; a write that fails leaves no temporary file behind, and one that meets a full
disk says so (`disk_full`).
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def write_atomic(path: Path, write: Callable[[str], Any], *, durable: bool = True) -> None:
    """`write(tmp)` fills a temporary file beside `path` (by name), which is fsynced and renamed to `path`.

    `durable=False` skips the fsync (about 5 ms a file on disk): other processes still see the old file or the
    whole new one, and only a power loss can leave it empty. For many small files whose readers check them
    (history records must hash to their name) or that are a cache."""
    with full_disk_named(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        try:
            write(tmp)
            if durable:
                with open(tmp, "rb") as fh:
                    os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


SHORT_WRITE = re.compile(r"\d+ requested and \d+ written")
"""numpy's whole message for a short write (`ndarray.tofile`, which `np.save` uses on a real file): stdio's
`fwrite` stopped early, as it does when the disk fills, and the errno was dropped."""
RUST_DISK_FULL = "(os error 28)"
"""How a Rust library (LanceDB) reports ENOSPC inside its own exception's text."""


def disk_full(exc: BaseException, path: Path) -> OSError | None:
    """`exc` as `OSError(ENOSPC, "No space left on device", path)` when it reports a full disk, however the
    writer raised it (an errno of ENOSPC, numpy's short write, a Rust library's os error 28); else None."""
    short = isinstance(exc, OSError) and exc.errno is None and SHORT_WRITE.fullmatch(str(exc)) is not None
    if not (short or (isinstance(exc, OSError) and exc.errno == errno.ENOSPC) or RUST_DISK_FULL in str(exc)):
        return None
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC) + (f" ({exc})" if short else ""), str(path))


@contextmanager
def full_disk_named(path: Path) -> Iterator[None]:
    """Re-raise a full disk met inside as `disk_full`'s `OSError(ENOSPC)` naming `path`, so a build's error
    says the disk is full and where, not "172032 requested and 21472 written"."""
    try:
        yield
    except Exception as exc:
        if (full := disk_full(exc, path)) is None:
            raise
        raise full from None  # unchained: a build reports a failure's root cause, and this one holds the detail


def write_text_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    write_atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), durable=durable)


def write_parquet_atomic(table: pa.Table, path: Path) -> None:
    """zstd-compressed Parquet. Only the columns whose values repeat (`repeating_columns`) get a dictionary and
    min/max statistics: over mostly distinct texts a statistic bounds nothing a reader filters on, and computing
    it compares every text (the wiki's pages at 10,000 articles: written in 1.56 s with statistics, 0.66 s
    without). Numbers inside lists get the encoding of their shape instead (`LIST_NUMBER_ENCODINGS`)."""
    chosen, encoded = repeating_columns(table), list_number_encodings(table)
    dictionary = [c for c in chosen if c not in encoded]
    write_atomic(
        path,
        lambda tmp: pq.write_table(
            table, tmp, compression="zstd", use_dictionary=dictionary, write_statistics=dictionary, column_encoding=encoded or None
        ),
    )


LIST_NUMBER_ENCODINGS = {"integer": "DELTA_BINARY_PACKED", "floating": "BYTE_STREAM_SPLIT"}
"""The Parquet encoding of the numbers inside list columns: a postings list's row numbers ascend, so their
deltas are small, and its weights compress once their bytes are split by position. The lexical index at
10,000 articles wrote in 1.56 s as 71.5 MB with dictionaries, in 0.96 s as 29.5 MB with these; it reads as fast."""


def list_number_encodings(table: pa.Table) -> dict[str, str]:
    """Column path -> encoding for every integer or floating leaf directly inside a list (`LIST_NUMBER_ENCODINGS`)."""
    out: dict[str, str] = {}
    for field in table.schema:
        kind = field.type
        if (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and (
            shape := "integer" if pa.types.is_integer(kind.value_type) else "floating" if pa.types.is_floating(kind.value_type) else None
        ):
            out[f"{field.name}.list.element"] = LIST_NUMBER_ENCODINGS[shape]
    return out


DICTIONARY_SAMPLE = 2000
"""Values of a column `repeating_columns` looks at: its first rows, enough to tell ids and texts (nearly all
distinct) from kinds, tenants and article ids of many rows each."""


def repeating_columns(table: pa.Table) -> list[str]:
    """The Parquet column paths worth a dictionary: every non-text leaf, and the text leaves whose first
    `DICTIONARY_SAMPLE` values are at most half distinct. A dictionary over mostly distinct texts saves no
    space and slows reading: at 10,000 articles a snapshot's `wiki_pages` read in 1.94 s with every column
    dictionary-encoded and in 0.29 s without its texts; `articles` 0.92 s against 0.08 s; the files the same size."""
    chosen: list[str] = []
    for field in table.schema:
        column = table.column(field.name)
        first = column.chunk(0).slice(0, DICTIONARY_SAMPLE) if column.num_chunks else pa.array([], field.type)
        _leaves(field.name, first, chosen)
    return chosen


def _leaves(path: str, values: pa.Array, chosen: list[str]) -> None:
    kind = values.type
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        _leaves(f"{path}.list.element", values.flatten(), chosen)
    elif pa.types.is_struct(kind):
        for i in range(kind.num_fields):
            _leaves(f"{path}.{kind.field(i).name}", values.field(i), chosen)
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
        sample = values.slice(0, DICTIONARY_SAMPLE)
        if len(sample) == 0 or pc.count_distinct(sample).as_py() * 2 <= len(sample):
            chosen.append(path)
    else:
        chosen.append(path)


def save_npy(path: str, array: Any) -> None:
    """`array` as a `.npy` file without pickled objects (what `np.load(..., allow_pickle=False)` reads)."""
    import numpy as np

    with open(path, "wb") as fh:
        np.save(fh, array, allow_pickle=False)


PARSER_LOCK = threading.Lock()
"""Held while code builds a Python AST in a thread: Python 3.11's AST constructor keeps its recursion depth per
interpreter, so two threads parsing at once can fail with "AST constructor recursion depth mismatch" (CPython
gh-106905). numpy parses every `.npy` header so, and pandera's first validation imports hypothesis, which
parses function sources; a snapshot load does both on parallel threads."""


def load_npy(path: Path, *, mmap: bool = False) -> Any:
    """What `save_npy` wrote; `mmap=True` maps it read-only."""
    import numpy as np

    with PARSER_LOCK:
        return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
