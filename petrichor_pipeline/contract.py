"""The snapshot contract shared by the pipeline (writer) and serving (reader).

A snapshot is a folder `snapshots/<version>/` holding one Parquet file per table and `manifest.json`;
vector tables live in LanceDB and the manifest records their table versions. `snapshots/CURRENT` names
the version serving should load. This module is pure apart from file helpers and imports no Dagster.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from petrichor_pipeline.text.normalize import article_version as version_of
from petrichor_pipeline.text.tokenize import DEFAULT_TOKENIZER

SCHEMA_VERSION = 1
CURRENT_FILE = "CURRENT"
MANIFEST_FILE = "manifest.json"
OFFLINE_CHAT_PREFIX = "offline:"
"""How the deterministic offline model's chat fingerprint starts. Serving tells its generated questions (too
literal to earn a retrieval route, measured in docs/evaluation.md) from a configured model's by it."""


def generated_by_model(chat_fingerprint: str | None) -> bool:
    """Whether an article's questions, wiki and summaries came from a configured model, not the offline one."""
    return bool(chat_fingerprint) and not chat_fingerprint.startswith(OFFLINE_CHAT_PREFIX)

_str = pa.string()
_strs = pa.list_(pa.string())

SCHEMAS: dict[str, pa.Schema] = {
    "articles": pa.schema(
        [
            ("article_id", _str),
            ("kb_id", _str),
            ("path", _str),
            ("title", _str),
            ("tenant", _str),
            ("visibility", _str),
            ("share_expires_at", _str),
            ("password_protected", pa.bool_()),
            ("article_version", _str),
            ("source_sha256", _str),
            ("content", _str),
            ("chunk_algorithm_version", pa.int32()),
            ("build_version", pa.int32()),
            ("chat_fingerprint", _str),
            ("bucket", _str),
            ("chunk_count", pa.int32()),
            ("warnings", _strs),
        ]
    ),
    "chunks": pa.schema(
        [
            ("chunk_id", _str),
            ("article_id", _str),
            ("kb_id", _str),
            ("tenant", _str),
            ("key", _str),
            ("position", pa.int32()),
            ("heading", _str),
            ("heading_path", _strs),
            ("content", _str),
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("index_text", _str),
            ("content_hash", _str),
        ]
    ),
    "chunk_windows": pa.schema(
        [
            ("window_id", _str),
            ("chunk_id", _str),
            ("article_id", _str),
            ("kb_id", _str),
            ("tenant", _str),
            ("position", pa.int32()),
            ("heading_path", _strs),
            ("content", _str),
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("index_text", _str),
            ("content_hash", _str),
        ]
    ),
    "questions": pa.schema(
        [
            ("question_id", _str),
            ("chunk_id", _str),
            ("article_id", _str),
            ("kb_id", _str),
            ("tenant", _str),
            ("position", pa.int32()),
            ("question", _str),
            ("index_text", _str),
            ("content_hash", _str),
        ]
    ),
    "wiki_pages": pa.schema(
        [
            ("page_key", _str),
            ("kb_id", _str),
            ("tenant", _str),
            ("kind", _str),
            ("title", _str),
            ("summary", _str),
            ("content_md", _str),
            ("aliases", _strs),
            ("category_path", _strs),
            ("article_ids", _strs),
        ]
    ),
    "wiki_links": pa.schema(
        [
            ("kb_id", _str),
            ("tenant", _str),
            ("from_page_key", _str),
            ("to_page_key", _str),
            ("link_type", _str),
            ("description", _str),
        ]
    ),
    "wiki_sources": pa.schema(
        [
            ("kb_id", _str),
            ("tenant", _str),
            ("page_key", _str),
            ("article_id", _str),
            ("article_version", _str),
            ("chunk_id", _str),
            ("note", _str),
        ]
    ),
    "tree_nodes": pa.schema(
        [
            ("node_key", _str),
            ("parent_key", _str),
            ("article_id", _str),
            ("kb_id", _str),
            ("tenant", _str),
            ("depth", pa.int32()),
            ("position", pa.int32()),
            ("title", _str),
            ("summary", _str),
            ("content", _str),
            ("start_line", pa.int32()),
            ("end_line", pa.int32()),
            ("token_estimate", pa.int32()),
            ("content_hash", _str),
        ]
    ),
    "lexical_index": pa.schema(
        [
            ("index", _str),
            ("term", _str),
            ("rows", pa.list_(pa.int32())),
            ("weights", pa.list_(pa.float32())),
        ]
    ),
}
"""Snapshot Parquet tables. Every content row carries `kb_id` and `tenant` so access filters apply before
ranking; `chunk_windows` are the chunks' child windows (`text.windows`), embedded and indexed on their own
and scored as their parent chunk; `lexical_index` holds the BM25 postings over the other tables' rows (see `text.lexical`)."""

VECTOR_TABLES = {"chunk_vectors": ("chunks", "chunk_id"), "question_vectors": ("questions", "question_id"), "window_vectors": ("chunk_windows", "window_id")}
"""Vector table -> the snapshot table and id column its rows embed."""

# ------------------------------------------------------------------------------ build warehouse tables

SOURCE_SCHEMA = pa.schema([f for f in SCHEMAS["articles"] if f.name not in ("chunk_count", "chat_fingerprint")])
"""The build's `articles` table stores the sources; the snapshot adds what the build derived (chunk count, model)."""

CANDIDATE_SCHEMA = pa.schema([("article_id", _str), ("kb_id", _str), ("tenant", _str), ("knowledge_json", _str)])
"""The build's `wiki_candidates` table: one row per article, its wiki contribution (`ArticleKnowledge.to_dict()`)."""

# ------------------------------------------------------------------------------ pandera validation

UNIQUE = {
    "articles": "article_id",
    "chunks": "chunk_id",
    "chunk_windows": "window_id",
    "questions": "question_id",
    "tree_nodes": "node_key",
}
NON_EMPTY = {
    "articles": ("article_id", "kb_id", "tenant", "title", "article_version"),
    "chunks": ("chunk_id", "article_id", "kb_id", "tenant", "key", "content"),
    "chunk_windows": ("window_id", "chunk_id", "article_id", "content"),
    "questions": ("question_id", "chunk_id", "question"),
    "wiki_pages": ("page_key", "kb_id", "tenant", "title"),
    "tree_nodes": ("node_key", "article_id"),
}
NULLABLE = {"share_expires_at", "parent_key", "chunk_id", "description", "note", "summary"}


def _polars_type(t: pa.DataType):
    import polars as pl

    return pl.from_arrow(pa.array([], type=t)).dtype


@lru_cache(maxsize=None)
def schema_for(name: str, omit: tuple[str, ...] = ()):
    """The pandera (polars) schema of a snapshot table: types from `SCHEMAS` plus row rules; `omit` names
    columns a reader left unparsed (their bytes are covered by the file's checksum)."""
    import pandera.polars as pdp
    import polars as pl

    cols = {}
    for f in SCHEMAS[name]:
        if f.name in omit:
            continue
        checks = [pdp.Check.str_length(min_value=1)] if f.name in NON_EMPTY.get(name, ()) else []
        cols[f.name] = pdp.Column(
            _polars_type(f.type), checks=checks, nullable=f.name in NULLABLE, unique=UNIQUE.get(name) == f.name
        )
    frame_checks = []
    if name in ("chunks", "chunk_windows"):
        frame_checks.append(pdp.Check(lambda df: df.lazyframe.select(pl.col("start") <= pl.col("end")), error="start <= end"))
    if name == "wiki_pages":
        frame_checks.append(
            pdp.Check(
                lambda df: df.lazyframe.select(~pl.struct("kb_id", "tenant", "page_key").is_duplicated()),
                error="page_key unique per (kb_id, tenant)",
            )
        )
    return pdp.DataFrameSchema(cols, checks=frame_checks, strict=True, name=name)


def validate_table(name: str, table: pa.Table, omit: tuple[str, ...] = ()) -> None:
    """Raise `pandera.errors.SchemaError` when the table breaks its contract (pipeline checks and serving both call this)."""
    import polars as pl

    schema_for(name, tuple(omit)).validate(pl.from_arrow(table))



def vector_schema(dim: int) -> pa.Schema:
    """LanceDB vector rows: `id` is a chunk_id, window_id or question_id; filters use kb_id/tenant/article_id."""
    return pa.schema(
        [
            ("id", _str),
            ("article_id", _str),
            ("kb_id", _str),
            ("tenant", _str),
            ("content_hash", _str),
            ("fingerprint", _str),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def chunk_id_of(article_id: str, chunk_key: str) -> str:
    """A chunk's id across the snapshot: its article and its `chunk-NNN` key, never a running counter."""
    return f"{article_id}:{chunk_key}"


def empty_table(name: str) -> pa.Table:
    return SCHEMAS[name].empty_table()


def to_table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Rows to an Arrow table with the contract schema (missing optional columns become null)."""
    schema = SCHEMAS[name]
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in rows], schema=schema)


def conform(name: str, table: pa.Table, omit: tuple[str, ...] = ()) -> pa.Table:
    """Cast a table to its contract schema (less the `omit` columns), column order included; raises on a missing column."""
    schema = SCHEMAS[name]
    for column in omit:
        schema = schema.remove(schema.get_field_index(column))
    return table.select([f.name for f in schema]).cast(schema)


@dataclass(frozen=True)
class EmbedFingerprint:
    model: str
    dim: int
    version: int = 1

    @property
    def key(self) -> str:
        return f"{self.model}:{self.dim}:v{self.version}"


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
    def from_json(cls, text: str) -> "Manifest":
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
    import hashlib

    now = now or datetime.now(timezone.utc)
    stamp = now.strftime("%Y%m%dT%H%M%S%fZ")
    return f"{stamp}-{hashlib.sha256((stamp + salt).encode()).hexdigest()[:6]}"


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# ------------------------------------------------------------------------------ article history store

HISTORY_DIR = "history"
"""`<data>/history/`: every article version a retained snapshot or a stored answer cites, content-addressed."""
PINS_DIR = "pins"
"""`history/pins/<trace_id>.json`: the (article_id, article_version) pairs a stored answer trace cites."""


@dataclass(frozen=True)
class ArticleRecord:
    """One article version as it was published: its snapshot row (scope fields included) and the chunk
    spans that give a citation's offsets their heading path."""

    article: dict[str, Any]
    """The snapshot's `articles` row for this version (content, title, tenant, kb_id, visibility, ...)."""
    spans: list[dict[str, Any]]
    """`[{"start", "end", "heading_path"}]` of the version's chunks, in article order."""

    @property
    def article_version(self) -> str:
        return self.article["article_version"]

    def heading_path_at(self, offset: int) -> list[str]:
        """The heading path of the chunk holding `offset` (the rule citations use); [] when none does."""
        for span in self.spans:
            if span["start"] <= offset < span["end"]:
                return list(span["heading_path"])
        return []

    def to_json(self) -> str:
        return json.dumps({"article": self.article, "spans": self.spans}, ensure_ascii=False, sort_keys=True)


def history_dir(data_dir: Path) -> Path:
    return Path(data_dir) / HISTORY_DIR


def article_record_path(data_dir: Path, article_version: str) -> Path:
    """`history/articles/<first two hex>/<article_version>.json`."""
    return history_dir(data_dir) / "articles" / article_version[:2] / f"{article_version}.json"


def pin_path(data_dir: Path, trace_id: str) -> Path:
    """A stored trace's pin: `{"cites": [[article_id, article_version], ...]}`."""
    return history_dir(data_dir) / PINS_DIR / f"{trace_id}.json"


def is_article_version(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def read_article_record(data_dir: Path, article_version: str) -> ArticleRecord | None:
    """The stored version, or None when it is unknown, collected or does not hash to its own name."""
    if not is_article_version(article_version):
        return None
    try:
        raw = json.loads(article_record_path(data_dir, article_version).read_text(encoding="utf-8"))
        record = ArticleRecord(article=raw["article"], spans=raw["spans"])
        intact = version_of(record.article["title"], record.article["content"]) == article_version
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if intact else None


# ---------------------------------------------------------------------------------------------- files


def write_parquet_atomic(table: pa.Table, path: Path) -> None:
    """Write to a temporary name in the same folder, fsync, then rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_current(snapshots_dir: Path) -> str | None:
    try:
        value = (snapshots_dir / CURRENT_FILE).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return value or None


def read_manifest(snapshots_dir: Path, version: str) -> Manifest:
    return Manifest.from_json((snapshots_dir / version / MANIFEST_FILE).read_text(encoding="utf-8"))


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
        _check_file(info, data.size, hashlib.sha256(memoryview(data)).hexdigest())
        return conform(name, pq.read_table(pa.BufferReader(data), columns=columns), omit)


# ------------------------------------------------------------------------------------------ integrity


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


def _check_file(info: dict[str, Any], size: int, sha256: str) -> None:
    if size != int(info["bytes"]):
        raise IntegrityError(f"{info['file']}: {size} bytes, the manifest records {info['bytes']} (truncated or replaced)")
    if sha256 != info["sha256"]:
        raise IntegrityError(f"{info['file']}: sha256 {sha256[:12]}… differs from the manifest's {info['sha256'][:12]}… (corrupted)")


def require_checksums(manifest: Manifest) -> None:
    """Every table of the contract is in the manifest with a checksum, and every vector table has its digest."""
    missing = [n for n in SCHEMAS if "sha256" not in manifest.tables.get(n, {})]
    missing += [n for n, info in manifest.vector_tables.items() if "sha256" not in info]
    if missing:
        raise IntegrityError(f"snapshot {manifest.version}: no checksum recorded for {', '.join(missing)}")


def verify_files(snapshots_dir: Path, manifest: Manifest) -> None:
    """Hash every Parquet file of the snapshot against its manifest entry (no parsing)."""
    require_checksums(manifest)
    for name in SCHEMAS:
        verify_file(snapshots_dir, manifest, name)


def _verified(path: Path, entry: dict[str, Any]) -> Path:
    """`path`, hashed in one streaming pass against its manifest `entry` (no parsing); refused by name when
    missing or different."""
    try:
        found = file_entry(path)
    except FileNotFoundError:
        raise IntegrityError(f"{entry['file']}: missing") from None
    _check_file(entry, found["bytes"], found["sha256"])
    return path


def verify_file(snapshots_dir: Path, manifest: Manifest, name: str) -> None:
    """Hash one table's Parquet file against its manifest entry in one streaming pass (no parsing)."""
    info = manifest.tables[name]
    _verified(snapshots_dir / manifest.version / info["file"], info)


def verify_articles(articles: pa.Table) -> None:
    """Every article's `article_version` is still sha256(title + "\n" + content): its text is what was hashed.

    A batch of rows at a time, so the article texts are never all Python strings at once."""
    bad = []
    for batch in articles.select(["article_id", "title", "content", "article_version"]).to_batches(max_chunksize=256):
        ids, titles, contents, versions = (col.to_pylist() for col in batch.columns)
        bad += [aid for aid, t, c, v in zip(ids, titles, contents, versions) if version_of(t, c) != v]
    if bad:
        raise IntegrityError(f"{len(bad)} article(s) whose text no longer matches article_version, first {bad[0]}")


_VECTOR_KEYS = ("id", "article_id", "kb_id", "tenant", "content_hash", "fingerprint")


def vector_digest(table: pa.Table) -> str:
    """sha256 over a vector table's rows in the order LanceDB returns them for one version (a fixed order).

    Hashes Arrow buffers (value lengths, then bytes) rather than values one by one, so the cost is a pass
    over the bytes; the publisher computes it from the table read back at the version it records.
    """
    import numpy as np

    t = table
    digest = hashlib.sha256()
    for name in _VECTOR_KEYS:
        col = pc.fill_null(t.column(name).cast(pa.string()), "").combine_chunks()
        offsets = np.frombuffer(col.buffers()[1], dtype=np.int32)[col.offset : col.offset + len(col) + 1]
        digest.update(np.diff(offsets).astype("<i4").tobytes())
        digest.update(col.buffers()[2].to_pybytes()[offsets[0] : offsets[-1]] if len(col) else b"")
    vectors = t.column("vector").combine_chunks()
    digest.update(memoryview(np.ascontiguousarray(pc.list_flatten(vectors).to_numpy(zero_copy_only=False), dtype="<f4")))
    return digest.hexdigest()


def _checked_out(lance_dir: Path, info: dict[str, Any]) -> tuple[Any, pa.Table]:
    """The LanceDB table at the manifest's version and its rows."""
    import lancedb

    try:
        tbl = lancedb.connect(str(lance_dir)).open_table(info["table"])
        tbl.checkout(int(info["version"]))
        return tbl, tbl.to_arrow()
    except Exception as exc:  # a missing table or version, or unreadable files
        raise IntegrityError(f"vector table {info['table']} v{info['version']}: cannot be read ({type(exc).__name__})") from exc


def read_vector_rows(lance_dir: Path, info: dict[str, Any]) -> pa.Table:
    """The rows of a vector table at the manifest's version (what `write_vector_files` stores compactly)."""
    return _checked_out(lance_dir, info)[1]


def open_vector_table(lance_dir: Path, info: dict[str, Any]) -> Any:
    """The LanceDB table checked out at the manifest's version, its rows verified against the recorded digest."""
    tbl, rows = _checked_out(lance_dir, info)
    if rows.num_rows != int(info["rows"]):
        raise IntegrityError(f"vector table {info['table']} v{info['version']}: {rows.num_rows} rows, the manifest records {info['rows']}")
    if "sha256" in info and vector_digest(rows) != info["sha256"]:
        raise IntegrityError(f"vector table {info['table']} v{info['version']}: rows differ from the manifest's digest")
    return tbl


# --------------------------------------------------------------------------------- compact vector files

ANN_MIN_ROWS = 10_000
"""Vector tables of at least this many rows also get a quantised index file; below, an exact product over
the allowed rows costs under 2 ms (the quantised search about 0.5)."""
TRAIN_ROWS = 20_000
"""Rows the quantiser is trained on, evenly spaced: plenty for 16 centroids per 2-dimensional slice."""
TRAIN_ITERATIONS = 10
"""k-means passes per slice: 16 centroids in 2 dimensions settle early (faiss' default of 25 doubles the time)."""
VECTOR_FILES = {"matrix": "{name}.f32.npy", "rows": "{name}.rows.npy", "ann": "{name}.pq.faiss"}
"""The compact files of one vector table in the snapshot folder: the float32 matrix ordered by the rows of
the table it embeds (`VECTOR_TABLES`), each vector's row there (int32), and the 4-bit product-quantisation
index of the matrix (tables of at least `ANN_MIN_ROWS` vectors). Serving memory-maps the matrix and reads
the index, so loading costs a checksum pass instead of parsing every vector."""


def quantised_index(matrix: Any) -> Any:
    """A trained 4-bit product-quantisation fast-scan index of `matrix` (inner product, 2 dimensions per code)."""
    import faiss
    import numpy as np

    faiss.omp_set_num_threads(1)
    dim = matrix.shape[1]
    index = faiss.IndexPQFastScan(dim, dim // 2 if dim % 2 == 0 else dim, 4, faiss.METRIC_INNER_PRODUCT)
    index.pq.cp.niter = TRAIN_ITERATIONS
    step = max(1, len(matrix) // TRAIN_ROWS)
    index.train(np.ascontiguousarray(matrix[::step][:TRAIN_ROWS]))
    index.add(matrix)
    return index


def _write_atomic(path: Path, write: Any) -> dict[str, Any]:
    """`write(tmp_path)`, fsync, rename; the manifest entry of the file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return {"file": path.name, **file_entry(path)}


def write_vector_files(folder: Path, name: str, rows: pa.Table, info: dict[str, Any], source_ids: list[str]) -> dict[str, Any] | None:
    """Store a vector table's rows (`read_vector_rows` at `info`'s version) as the compact files of
    `VECTOR_FILES` in the snapshot folder; the manifest entry, or None when the rows mix fingerprints
    (then serving reads the LanceDB table). `source_ids` are the ids of the embedded table, in its order;
    vectors of no row there are left out."""
    import numpy as np

    fingerprints = pc.unique(rows.column("fingerprint")).to_pylist()
    if len(fingerprints) > 1:
        return None
    row_of = {i: r for r, i in enumerate(source_ids)}
    at = np.fromiter((row_of.get(i, -1) for i in rows.column("id").to_pylist()), dtype=np.int64, count=rows.num_rows)
    order = np.argsort(at, kind="stable")
    order = order[at[order] >= 0]
    vectors = rows.column("vector").combine_chunks()
    dim = vectors.type.list_size
    flat = vectors.values.to_numpy(zero_copy_only=False).reshape(rows.num_rows, dim)
    matrix = np.ascontiguousarray(flat[order], dtype=np.float32)
    paths = {kind: folder / pattern.format(name=name) for kind, pattern in VECTOR_FILES.items()}
    files = {
        "matrix": _write_atomic(paths["matrix"], lambda tmp: _save_npy(tmp, matrix)),
        "rows": _write_atomic(paths["rows"], lambda tmp: _save_npy(tmp, at[order].astype(np.int32))),
    }
    if len(matrix) >= ANN_MIN_ROWS:
        import faiss

        index = quantised_index(matrix)
        files["ann"] = _write_atomic(paths["ann"], lambda tmp: faiss.write_index(index, tmp))
    return {
        "files": files,
        "count": len(matrix),
        "dim": dim,
        "fingerprint": fingerprints[0] if fingerprints else None,
        "table_version": info["version"],
        "table_rows": info["rows"],
        "table_sha256": info["sha256"],
    }


def _save_npy(path: str, array: Any) -> None:
    import numpy as np

    with open(path, "wb") as fh:
        np.save(fh, array, allow_pickle=False)


@dataclass(frozen=True)
class VectorFiles:
    """A vector table's compact files, verified: the matrix memory-mapped read-only (pages load when a
    search touches them), the rows in memory, the quantised index's path."""

    name: str
    matrix: Any
    """(count, dim) float32 `np.memmap`, rows ordered as in the embedded table."""
    rows: Any
    """int32 row of each vector in the embedded table (`VECTOR_TABLES`)."""
    fingerprint: str | None
    ann_path: Path | None


def open_vector_files(folder: Path, name: str, info: dict[str, Any]) -> VectorFiles:
    """The compact files `info["compact"]` records, each hashed in one streaming pass (reads, not the
    mapping, so the check adds nothing resident) and tied to the vector table version the manifest names."""
    import numpy as np

    compact = info["compact"]
    for key, recorded in (("table_version", "version"), ("table_rows", "rows"), ("table_sha256", "sha256")):
        if compact.get(key) != info.get(recorded):
            raise IntegrityError(f"vector table {info['table']} v{info['version']}: its {recorded} differs from the compact files' ({compact.get(key)!r})")
    paths = {}
    for kind, entry in compact["files"].items():
        paths[kind] = _verified(folder / entry["file"], entry)
    matrix = np.load(paths["matrix"], mmap_mode="r" if compact["count"] else None, allow_pickle=False)  # no mapping of 0 bytes
    rows = np.load(paths["rows"], allow_pickle=False)
    if matrix.shape != (compact["count"], compact["dim"]) or rows.shape != (compact["count"],) or matrix.dtype != np.float32:
        raise IntegrityError(f"vector files of {name}: shape {matrix.shape} / {rows.shape}, the manifest records {compact['count']} x {compact['dim']}")
    return VectorFiles(name=name, matrix=matrix, rows=rows, fingerprint=compact.get("fingerprint"), ann_path=paths.get("ann"))


LEXICAL_FILES = {"postings": "lexical_index.arrow", "lengths": "lexical_lengths.arrow"}
"""The mapped lexical files beside `lexical_index.parquet`: the same postings table as an uncompressed Arrow
IPC file in one record batch, and each index's weighted document lengths (`index`, `lengths`). Serving
memory-maps both, so loading parses no posting and a term's pages load when a query scores it; the Parquet
file stays the table other readers use."""


def write_lexical_files(folder: Path, postings: pa.Table, lengths: pa.Table) -> dict[str, dict[str, Any]]:
    """Write `LEXICAL_FILES` into the snapshot folder; their manifest entries (`manifest.lexical["files"]`)."""
    out = {}
    for kind, table in (("postings", postings), ("lengths", lengths)):
        def write(tmp: str, table: pa.Table = table) -> None:
            with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table.combine_chunks())  # one batch: every column one contiguous array
        out[kind] = _write_atomic(folder / LEXICAL_FILES[kind], write)
    return out


def open_lexical_files(folder: Path, files: dict[str, dict[str, Any]]) -> dict[str, pa.Table]:
    """The tables of `write_lexical_files`, each hashed in one streaming pass (reads, not the mapping, so
    the check adds nothing resident), then memory-mapped: zero-copy views of the files."""
    out = {}
    for kind in LEXICAL_FILES:
        path = _verified(folder / files[kind]["file"], files[kind])
        out[kind] = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    return out


def verify_snapshot(data_dir: Path, version: str) -> None:
    """The whole check serving applies before it loads, minus parsing: files, then vector tables.

    `petrichor build` calls it on `CURRENT` so that a snapshot serving would refuse gets republished.
    """
    snaps = data_dir / "snapshots"
    try:
        manifest = read_manifest(snaps, version)
    except (OSError, ValueError, TypeError) as exc:
        raise IntegrityError(f"manifest of {version}: {type(exc).__name__}: {exc}") from exc
    verify_files(snaps, manifest)
    if files := manifest.lexical.get("files"):
        open_lexical_files(snaps / version, files)
    for name, info in manifest.vector_tables.items():
        open_vector_table(data_dir / "lance", info)
        if "compact" in info:
            open_vector_files(snaps / version, name, info)


def write_manifest(snapshots_dir: Path, manifest: Manifest) -> None:
    """The manifest, written after every file it lists: a folder with one is complete."""
    write_text_atomic(snapshots_dir / manifest.version / MANIFEST_FILE, manifest.to_json())


def point_current(snapshots_dir: Path, version: str) -> None:
    """Point CURRENT at a complete snapshot with one atomic rename."""
    write_text_atomic(snapshots_dir / CURRENT_FILE, version + "\n")


def publish(snapshots_dir: Path, manifest: Manifest) -> None:
    """Write the manifest last, then point CURRENT at it."""
    write_manifest(snapshots_dir, manifest)
    point_current(snapshots_dir, manifest.version)


def collect_garbage(snapshots_dir: Path, keep: int) -> list[str]:
    """Delete all but the newest `keep` complete snapshots and abandoned partial folders; never CURRENT's."""
    current = read_current(snapshots_dir)
    if not snapshots_dir.exists():
        return []
    folders = sorted((p for p in snapshots_dir.iterdir() if p.is_dir()), key=lambda p: p.name)
    complete = [p for p in folders if (p / MANIFEST_FILE).exists()]
    keep_names = {p.name for p in complete[-keep:]} | ({current} if current else set())
    newest = complete[-1].name if complete else ""
    removed = []
    for p in folders:
        # a folder without a manifest that is newer than the newest complete one may be a build in flight
        partial_in_flight = not (p / MANIFEST_FILE).exists() and p.name > newest
        if p.name in keep_names or partial_in_flight:
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p.name)
    return removed
