"""The warehouse: one Parquet file per (asset, bucket), written atomically, and its sidecar JSON; a table
over all buckets (the wiki's) as one compressed Arrow IPC file (`WHOLE_FILE`).

Each asset partition reads its own previous file to reuse rows of unchanged articles, so the
warehouse is both the output of a bucket run and the cache of the next one. What each bucket was built
from is recorded on the Dagster instance, not here (`petrichor_pipeline.staleness`), together with the
digest of the files it wrote (`files_digest`): the instance does not know which data folder it describes,
so a bucket counts as fresh only while this folder still holds exactly those files.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from petrichor_pipeline.contract.files import write_atomic, write_parquet_atomic, write_text_atomic


WHOLE = "all"
"""The name of a table over all buckets (the wiki's), rewritten by every publish and read whole by the next."""
ARROW_OPTIONS = pa.ipc.IpcWriteOptions(compression="zstd")
"""How the warehouse's own tables (`write_arrow`) are stored: a zstd-compressed Arrow IPC file. The wiki's pages
at 10,000 articles (248 MB of text) write in 0.45 s and read in 0.19 s; as Parquet 0.5 s and 0.3 to 1.9 s,
uncompressed 2.8 s (flushing 249 MB to disk). A bucket's postings cache: 0.03 s and 0.01 s against 0.11 s
and 0.03 s."""


@dataclass(frozen=True)
class Warehouse:
    root: Path

    def path(self, asset: str, bucket: str | None = None) -> Path:
        return self.root / asset / f"bucket={bucket}.parquet" if bucket is not None else self.arrow_path(asset, WHOLE)

    def arrow_path(self, asset: str, name: str) -> Path:
        return self.root / asset / f"{name}.arrow"

    def read(self, asset: str, bucket: str | None = None, schema: pa.Schema | None = None) -> pa.Table | None:
        """The previous output, or None when there is none (first build) or it is unreadable."""
        if bucket is None:
            table = self.read_arrow(asset, WHOLE)
        else:
            p = self.path(asset, bucket)
            if not p.exists():
                return None
            try:  # only the schema's columns are read; a file lacking one is unreadable like a corrupt one
                table = pq.read_table(p, columns=schema.names if schema is not None else None)
            except (OSError, pa.ArrowInvalid):
                return None
        if table is not None and schema is not None:
            try:
                table = table.select(schema.names).cast(schema)
            except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return None
        return table

    def write(self, asset: str, table: pa.Table, bucket: str | None = None) -> Path:
        if bucket is None:
            return self.write_arrow(asset, WHOLE, table)
        p = self.path(asset, bucket)
        write_parquet_atomic(table, p)
        return p

    def read_arrow(self, asset: str, name: str) -> pa.Table | None:
        """A table `write_arrow` wrote, with its schema's metadata; its older Parquet form (`<name>.parquet`) when
        that is all there is; None when neither is there or readable."""
        p = self.arrow_path(asset, name)
        try:
            if p.exists():
                return pa.ipc.open_file(pa.memory_map(str(p))).read_all()
            legacy = p.with_suffix(".parquet")
            return pq.read_table(legacy) if legacy.exists() else None
        except (OSError, pa.ArrowInvalid):
            return None

    def write_arrow(self, asset: str, name: str, table: pa.Table) -> Path:
        """`table` as the warehouse's own file `<name>.arrow` (`ARROW_OPTIONS`), written atomically; the older
        Parquet form goes."""
        p = self.arrow_path(asset, name)

        def write(tmp: str) -> None:  # one record batch: a table of many slices would write each of them apart
            with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, table.schema, options=ARROW_OPTIONS) as writer:
                writer.write_table(table.combine_chunks())

        write_atomic(p, write)
        p.with_suffix(".parquet").unlink(missing_ok=True)
        return p

    def files_digest(self, asset: str, bucket: str) -> str:
        """sha256 over one bucket's files of `asset` (its Parquet file and sidecar), a missing one included as
        missing: what a materialization records and a later plan compares, so a deleted, foreign or restored
        older warehouse never passes for the one the instance recorded."""
        h = hashlib.sha256()
        for path in (self.path(asset, bucket), self.root / asset / f"bucket={bucket}.json"):
            h.update(f"{path.name}\n".encode())
            try:
                with open(path, "rb") as fh:
                    h.update(hashlib.file_digest(fh, "sha256").digest())
            except FileNotFoundError:
                h.update(b"missing")
        return h.hexdigest()[:32]

    def read_all_buckets(self, asset: str, buckets: tuple[str, ...], schema: pa.Schema) -> pa.Table:
        tables = [t for b in buckets if (t := self.read(asset, b, schema)) is not None]
        return pa.concat_tables(tables) if tables else schema.empty_table()

    def write_json(self, asset: str, bucket: str, payload: Any) -> None:
        write_text_atomic(self.root / asset / f"bucket={bucket}.json", json.dumps(payload, ensure_ascii=False, indent=1))

    def read_json(self, asset: str, bucket: str) -> Any:
        try:
            return json.loads((self.root / asset / f"bucket={bucket}.json").read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None
