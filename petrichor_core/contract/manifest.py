"""A snapshot's manifest and the checksums it records.

`snapshots/<version>/manifest.json` lists every file of the snapshot with its size and sha256, every vector
table with the LanceDB version and a digest of its rows, and the build-time choices serving must match (the
tokenizer, the embedding model). It is written after every file it lists, so a folder that has one is
complete; a reader refuses a snapshot whose files differ from it (`IntegrityError`) before parsing them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from petrichor_core.contract.files import write_atomic, write_text_atomic
from petrichor_core.contract.schemas import SCHEMAS, conform, empty_table
from petrichor_core.text.normalize import article_version as version_of
from petrichor_core.text.tokenize import DEFAULT_TOKENIZER
from petrichor_core.versions import SCHEMA_VERSION

MANIFEST_FILE = "manifest.json"
OFFLINE_CHAT_PREFIX = "offline:"
"""How the deterministic offline model's chat fingerprint starts. Serving tells its generated questions (too
literal to earn a retrieval route, measured in docs/evaluation.md) from a configured model's by it."""


def generated_by_model(chat_fingerprint: str | None) -> bool:
    """Whether an article's questions, wiki and summaries came from a configured model, not the offline one."""
    return bool(chat_fingerprint and not chat_fingerprint.startswith(OFFLINE_CHAT_PREFIX))


@dataclass
class Manifest:
    version: str
    created_at: str
    parent_version: str | None
    schema_version: int
    chunk_algorithm_version: int
    build_version: int
    chat_fingerprint: str
    embed_fingerprint: dict[str, Any] | None
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    """name -> {"file": "<name>.parquet", "rows": n, "bytes": n, "sha256": hex}"""
    vector_tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    """name -> {"uri": lance dir relative to the data dir, "table": name, "version": n, "rows": n, "sha256": `vector_digest`}"""
    lexical: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        raw = json.loads(text)
        if raw.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"unsupported snapshot schema_version {raw.get('schema_version')!r}")
        return cls(**raw)

    @property
    def row_counts(self) -> dict[str, int]:
        return {n: int(t["rows"]) for n, t in self.tables.items()}

    @property
    def tokenizer(self) -> str:
        """The tokenizer the build indexed with: serving tokenises queries (and any index it rebuilds) with
        it, never with its own setting. A manifest without one predates the field: bigram."""
        return self.lexical.get("tokenizer") or DEFAULT_TOKENIZER

    @property
    def tokenizer_revision(self) -> int:
        """The tokenizer revision of the stored postings (1: recorded before revisions were)."""
        return int(self.lexical.get("tokenizer_revision", 1))


def new_version(now: datetime | None = None, salt: str = "") -> str:
    """Sortable, unique snapshot version: UTC timestamp with microseconds plus a short hash."""
    now = now or datetime.now(UTC)
    stamp = now.strftime("%Y%m%dT%H%M%S%fZ")
    return f"{stamp}-{hashlib.sha256((stamp + salt).encode()).hexdigest()[:6]}"


def utc_now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_manifest(snapshots_dir: Path, version: str) -> Manifest:
    return Manifest.from_json((snapshots_dir / version / MANIFEST_FILE).read_text(encoding="utf-8"))


def write_manifest(snapshots_dir: Path, manifest: Manifest) -> None:
    """The manifest, written after every file it lists: a folder with one is complete."""
    write_text_atomic(snapshots_dir / manifest.version / MANIFEST_FILE, manifest.to_json())


# ------------------------------------------------------------------------------------------ checksums


class IntegrityError(ValueError):
    """A snapshot whose files, rows or vector tables differ from what its manifest records: it is refused."""


def file_entry(path: Path) -> dict[str, Any]:
    """The checksum fields the manifest records for one snapshot file."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
            size += len(block)
    return {"bytes": size, "sha256": digest.hexdigest()}


def write_entry(path: Path, write: Callable[[str], Any]) -> dict[str, Any]:
    """`write(tmp)` through the atomic writer; the manifest entry (name, size, sha256) of the file written."""
    write_atomic(path, write)
    return {"file": path.name, **file_entry(path)}


def check_entry(info: dict[str, Any], size: int, sha256: str) -> None:
    """Raise `IntegrityError` when a file's size or sha256 differs from its manifest entry `info`."""
    if size != int(info["bytes"]):
        raise IntegrityError(f"{info['file']}: {size} bytes, the manifest records {info['bytes']} (truncated or replaced)")
    if sha256 != info["sha256"]:
        raise IntegrityError(f"{info['file']}: sha256 {sha256[:12]}… differs from the manifest's {info['sha256'][:12]}… (corrupted)")


def verified(path: Path, entry: dict[str, Any]) -> Path:
    """`path`, hashed in one streaming pass against its manifest `entry` (no parsing); refused by name when
    missing or different."""
    try:
        found = file_entry(path)
    except FileNotFoundError:
        raise IntegrityError(f"{entry['file']}: missing") from None
    check_entry(entry, found["bytes"], found["sha256"])
    return path


def require_checksums(manifest: Manifest) -> None:
    """Every table of the contract is in the manifest with a checksum, and every vector table has its digest."""
    missing = [n for n in SCHEMAS if "sha256" not in manifest.tables.get(n, {})]
    missing += [n for n, info in manifest.vector_tables.items() if "sha256" not in info]
    if missing:
        raise IntegrityError(f"snapshot {manifest.version}: no checksum recorded for {', '.join(missing)}")


def verify_file(snapshots_dir: Path, manifest: Manifest, name: str) -> None:
    """Hash one table's Parquet file against its manifest entry in one streaming pass (no parsing)."""
    info = manifest.tables[name]
    verified(snapshots_dir / manifest.version / info["file"], info)


def read_table(snapshots_dir: Path, manifest: Manifest, name: str, *, verify: bool = True, omit: tuple[str, ...] = ()) -> pa.Table:
    """A snapshot table conformed to its schema; a table the manifest lacks reads as empty.

    When the manifest records the file's checksum the bytes are verified before they are parsed (read once);
    `verify=False` is for the asset checks, which report checksums in a check of their own. `omit` columns
    are not decoded (the checksum still covers the whole file).
    """
    info = manifest.tables.get(name)
    if info is None:
        return conform(name, empty_table(name), omit)
    path = snapshots_dir / manifest.version / info["file"]
    columns = [f.name for f in SCHEMAS[name] if f.name not in omit] if omit else None
    if not verify or "sha256" not in info:
        return conform(name, pq.read_table(path, columns=columns), omit)
    with pa.memory_map(str(path)) as source:  # hashed and parsed from one mapping: no copy of the file in memory
        data = source.read_buffer()
        check_entry(info, data.size, hashlib.sha256(memoryview(data)).hexdigest())
        return conform(name, pq.read_table(pa.BufferReader(data), columns=columns), omit)


def verify_articles(articles: pa.Table) -> None:
    """Every article's `article_version` is still sha256(title + "\n" + content): its text is what was hashed.

    A batch of rows at a time, so the article texts are never all Python strings at once."""
    bad = []
    for batch in articles.select(["article_id", "title", "content", "article_version"]).to_batches(max_chunksize=256):
        ids, titles, contents, versions = (col.to_pylist() for col in batch.columns)
        bad += [aid for aid, t, c, v in zip(ids, titles, contents, versions) if version_of(t, c) != v]
    if bad:
        raise IntegrityError(f"{len(bad)} article(s) whose text no longer matches article_version, first {bad[0]}")
