"""The snapshot contract shared by the pipeline (writer) and serving (reader), one module per job.

A snapshot is a folder `snapshots/<version>/` holding one Parquet file per table, compact vector and
lexical files, and `manifest.json`; vector tables live in LanceDB and the manifest records their versions.
`snapshots/CURRENT` names the version serving loads. The package imports no Dagster and nothing of ours
but `petrichor_core.text`.

- `schemas`: the tables' Arrow schemas and pandera rules;
- `manifest`: the manifest, its checksums and the verified table read;
- `files`: the one atomic writer;
- `vectors`: LanceDB reads, the vector digest, the compact vector files and quantiser training;
- `lexical_files`: the mapped BM25 postings;
- `history`: the article history store's layout and read side;
- `reader`: the one reader of a snapshot, whose checks the publish check and serving's load both make;
- `current`: the `CURRENT` pointer, publishing, the whole-snapshot check and garbage collection.

The names below are re-exported for callers that import them from the package; new code imports the module.
"""

from petrichor_core.contract.current import (
    CURRENT_FILE,
    collect_garbage,
    point_current,
    publish,
    read_current,
    verify_snapshot,
)
from petrichor_core.contract.files import write_atomic, write_parquet_atomic, write_text_atomic
from petrichor_core.contract.history import (
    HISTORY_DIR,
    PINS_DIR,
    ArticleRecord,
    article_record_path,
    history_dir,
    is_article_version,
    pin_path,
    read_article_records,
)
from petrichor_core.contract.lexical_files import LEXICAL_FILES, open_lexical_files, write_lexical_files
from petrichor_core.contract.manifest import (
    MANIFEST_FILE,
    OFFLINE_CHAT_PREFIX,
    SCHEMA_VERSION,
    IntegrityError,
    Manifest,
    file_entry,
    generated_by_model,
    new_version,
    read_manifest,
    read_table,
    require_checksums,
    utc_now_iso,
    verify_articles,
    verify_file,
    write_manifest,
)
from petrichor_core.contract.reader import INDEX_ONLY, FileCheck, SnapshotReader, open_snapshot
from petrichor_core.contract.schemas import (
    CANDIDATE_SCHEMA,
    SCHEMAS,
    SOURCE_SCHEMA,
    UNIQUE,
    VECTOR_TABLES,
    chunk_id_of,
    conform,
    empty_table,
    schema_for,
    to_table,
    validate_table,
    vector_schema,
)
from petrichor_core.contract.vectors import (
    ANN_MIN_ROWS,
    VECTOR_FILES,
    VectorFiles,
    open_vector_files,
    open_vector_table,
    quantised_index,
    read_vector_rows,
    vector_digest,
    write_vector_files,
)

__all__ = [
    "CURRENT_FILE",
    "collect_garbage",
    "point_current",
    "publish",
    "read_current",
    "verify_snapshot",
    "write_atomic",
    "write_parquet_atomic",
    "write_text_atomic",
    "HISTORY_DIR",
    "PINS_DIR",
    "ArticleRecord",
    "article_record_path",
    "history_dir",
    "is_article_version",
    "pin_path",
    "read_article_records",
    "LEXICAL_FILES",
    "open_lexical_files",
    "write_lexical_files",
    "MANIFEST_FILE",
    "OFFLINE_CHAT_PREFIX",
    "SCHEMA_VERSION",
    "IntegrityError",
    "Manifest",
    "file_entry",
    "generated_by_model",
    "new_version",
    "read_manifest",
    "read_table",
    "require_checksums",
    "utc_now_iso",
    "verify_articles",
    "verify_file",
    "write_manifest",
    "INDEX_ONLY",
    "FileCheck",
    "SnapshotReader",
    "open_snapshot",
    "CANDIDATE_SCHEMA",
    "SCHEMAS",
    "SOURCE_SCHEMA",
    "UNIQUE",
    "VECTOR_TABLES",
    "chunk_id_of",
    "conform",
    "empty_table",
    "schema_for",
    "to_table",
    "validate_table",
    "vector_schema",
    "ANN_MIN_ROWS",
    "VECTOR_FILES",
    "VectorFiles",
    "open_vector_files",
    "open_vector_table",
    "quantised_index",
    "read_vector_rows",
    "vector_digest",
    "write_vector_files",
]
