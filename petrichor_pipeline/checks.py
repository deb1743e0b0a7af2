"""Asset checks on the snapshot: what a data engineer wants to see green in the UI.

They run in every publish run, on the snapshot that run staged, before `published_snapshot` may point
`CURRENT` at it; run alone they look at `CURRENT` (`assets.snapshot.snapshot_under_check`). The integrity
checks are blocking: a snapshot that fails one would serve wrong, unverifiable or broken data, so Dagster
skips `published_snapshot`, the run fails and `CURRENT` stays where it was.

These five and the wiki lint (`lint_checks`) are one multi-asset check (`snapshot_checks`): one step reads
each table once for all of them (they read the same articles, chunks and pages), and the checksums are hashed
on a thread meanwhile. Each check stays its own spec: the UI shows, and a run may select, each one alone.
"""

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from dagster import AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity

from petrichor_core.contract.current import verify_snapshot
from petrichor_core.contract.manifest import IntegrityError, Manifest, read_manifest, read_table
from petrichor_core.contract.schemas import SCHEMAS
from petrichor_core.versions import BUILD_VERSION, CHUNK_ALGORITHM_VERSION
from petrichor_pipeline.assets.snapshot import snapshot_under_check
from petrichor_pipeline.builder.scan_handoff import SCAN_TAG
from petrichor_pipeline.resources import PetrichorResource


class SnapshotTables:
    """The tables of the snapshot under check, each read once per check step and unverified: the checksums
    are a check of their own (`snapshot_checksums_verify`)."""

    def __init__(self, snaps: Any, manifest: Manifest):
        self.snaps, self.manifest = snaps, manifest
        self._read: dict[str, pa.Table] = {}
        self._reading: dict[str, Future[pa.Table]] = {}
        self._derived: dict[str, Any] = {}

    def read_ahead(self, pool: ThreadPoolExecutor, first: tuple[str, ...]) -> None:
        """Read every table on `pool`, `first` first, while the checks evaluate: decoding Parquet releases
        the GIL, and a check scanning page bodies in Python holds it."""
        for name in sorted(SCHEMAS, key=lambda n: first.index(n) if n in first else len(first)):
            if name not in self._read and name not in self._reading:
                self._reading[name] = pool.submit(read_table, self.snaps, self.manifest, name, verify=False)

    def __getitem__(self, name: str) -> pa.Table:
        if name not in self._read:
            reading = self._reading.pop(name, None)
            self._read[name] = reading.result() if reading is not None else read_table(self.snaps, self.manifest, name, verify=False)
        return self._read[name]

    def derived(self, key: str, compute: Callable[[], Any]) -> Any:
        """What several checks compute from the tables (the wiki's body links), computed once."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]


def _current(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> tuple[Any, Manifest | None]:
    """The snapshots folder and the manifest of the snapshot under check."""
    snaps = petrichor.context().settings.snapshots_dir
    version = snapshot_under_check(context.instance, context.run.run_id, snaps)
    return snaps, (read_manifest(snaps, version) if version else None)


def schemas_valid(context: AssetCheckExecutionContext, petrichor: PetrichorResource, tables: SnapshotTables) -> AssetCheckResult:
    """Serving reads every table by its schema; a table that breaks it fails requests or answers with wrong fields."""
    from pandera.errors import SchemaError

    from petrichor_core.contract.schemas import validate_table

    failures = {}
    for name in SCHEMAS:
        try:
            validate_table(name, tables[name])
        except SchemaError as exc:
            failures[name] = str(exc)[:300]
    return AssetCheckResult(passed=not failures, metadata={"snapshot_version": tables.manifest.version, "failures": failures})


def referential_integrity(context: AssetCheckExecutionContext, petrichor: PetrichorResource, tables: SnapshotTables) -> AssetCheckResult:
    """An orphan chunk or question is text without an article, so without its tenant and visibility: it could be served to anyone."""
    arts, chunks, questions = tables["articles"].column("article_id"), tables["chunks"], tables["questions"]
    orphan_chunks = chunks.num_rows - pc.sum(pc.is_in(chunks.column("article_id"), value_set=arts)).as_py() if chunks.num_rows else 0
    orphan_questions = (
        questions.num_rows - pc.sum(pc.is_in(questions.column("chunk_id"), value_set=chunks.column("chunk_id"))).as_py() if questions.num_rows else 0
    )
    return AssetCheckResult(
        passed=orphan_chunks == 0 and orphan_questions == 0,
        metadata={"orphan_chunks": int(orphan_chunks or 0), "orphan_questions": int(orphan_questions or 0)},
    )


def vector_dimensions(context: AssetCheckExecutionContext, petrichor: PetrichorResource, tables: SnapshotTables) -> AssetCheckResult:
    """A vector of another model or dimension makes every vector search of the snapshot fail or rank nonsense."""
    m = tables.manifest
    if not m.vector_tables:
        return AssetCheckResult(passed=True, severity=AssetCheckSeverity.WARN, description="no vector tables (embedding off or pending)")
    import lancedb  # only here: importing it takes 1-2 s, which a build without vectors need not pay

    db = lancedb.connect(str(petrichor.context().settings.lance_dir))
    problems: dict[str, str] = {}
    for name, info in m.vector_tables.items():
        tbl = db.open_table(info["table"])
        tbl.checkout(int(info["version"]))
        t = tbl.to_arrow()
        dim = t.schema.field("vector").type.list_size
        fps = set(t.column("fingerprint").to_pylist())
        if m.embed_fingerprint and dim != m.embed_fingerprint["dim"]:
            problems[name] = f"dimension {dim} != {m.embed_fingerprint['dim']}"
        elif m.embed_fingerprint and fps - {m.embed_fingerprint["key"]}:
            problems[name] = f"foreign fingerprints {sorted(fps - {m.embed_fingerprint['key']})}"
    return AssetCheckResult(passed=not problems, metadata={"problems": problems})


def no_stale_articles(context: AssetCheckExecutionContext, petrichor: PetrichorResource, tables: SnapshotTables) -> AssetCheckResult:
    """A chunk that is not the slice of its article it claims quotes and cites text the article does not hold."""
    columns = ["article_id", "content", "chunk_algorithm_version", "build_version", "article_version"]
    arts = {r["article_id"]: r for r in tables["articles"].select(columns).to_pylist()}
    stale = set()
    for aid, a in arts.items():
        if a["chunk_algorithm_version"] != CHUNK_ALGORITHM_VERSION or a["build_version"] != BUILD_VERSION:
            stale.add(aid)
    for c in tables["chunks"].select(["article_id", "content", "start", "end"]).to_pylist():
        art = arts.get(c["article_id"])
        if art is None or art["content"][c["start"] : c["end"]] != c["content"]:
            stale.add(c["article_id"])
    moved: list[str] = []
    if not context.run.tags.get(SCAN_TAG):  # a build's run staged the snapshot from its scan, which `check_matches_scan` compared
        corpus = {a.article_id: a.article_version for a in petrichor.context().scan().articles}
        moved = sorted(aid for aid, v in corpus.items() if arts.get(aid, {}).get("article_version") != v)
    return AssetCheckResult(
        passed=not stale,
        metadata={"stale_articles": sorted(stale)[:50], "changed_in_corpus_since_publish": moved[:50]},
    )


def checksums_verify(context: AssetCheckExecutionContext, petrichor: PetrichorResource, tables: SnapshotTables) -> AssetCheckResult:
    """Serving refuses a snapshot whose files do not match the manifest, so publishing one would take search down."""
    m = tables.manifest
    try:
        verify_snapshot(petrichor.context().settings.data_dir, m.version)
    except IntegrityError as exc:
        return AssetCheckResult(passed=False, metadata={"snapshot_version": m.version, "failure": str(exc)[:300]})
    return AssetCheckResult(passed=True, metadata={"snapshot_version": m.version})


Check = Callable[[AssetCheckExecutionContext, PetrichorResource, SnapshotTables], AssetCheckResult]

SNAPSHOT_CHECKS: dict[str, tuple[str, Check]] = {
    "snapshot_checksums_verify": (
        "Every file and vector table version matches the manifest's checksums, as serving verifies them.",
        checksums_verify,
    ),
    "snapshot_schemas_valid": ("Every snapshot table satisfies its pandera schema.", schemas_valid),
    "snapshot_referential_integrity": ("No chunk without its article; every question points at an existing chunk.", referential_integrity),
    "snapshot_vector_dimensions": ("Vector tables hold only vectors of the manifest's fingerprint and dimension.", vector_dimensions),
    "snapshot_has_no_stale_articles": (
        "No stale article: every chunk is the exact slice of its article version it claims to be, built by the current "
        "chunker and build version; also reports articles changed in the corpus since publishing.",
        no_stale_articles,
    ),
}
"""Check name -> (description, function): the blocking checks of every staged snapshot."""
HASHED_ASIDE = "snapshot_checksums_verify"
"""The check that hashes every file (I/O and hashlib, which release the GIL): it runs on a thread beside the others."""
EVERY_TABLE = "snapshot_schemas_valid"
"""The check that reads every table: when it runs, the tables are read ahead on a thread (`SnapshotTables.read_ahead`)."""


def run_checks(
    context: AssetCheckExecutionContext,
    petrichor: PetrichorResource,
    checks: dict[str, tuple[str, Check]],
    asset: str = "snapshot",
    read_first: tuple[str, ...] = (),
) -> Iterator[AssetCheckResult]:
    """The selected `checks` over the snapshot under check, in their order, from one read of each table
    (read ahead, `read_first` first, when every table is read anyway)."""
    selected = [name for name in checks if any(k.name == name for k in context.selected_asset_check_keys)]
    snaps, m = _current(context, petrichor)
    if m is None:
        for name in selected:
            yield AssetCheckResult(check_name=name, asset_key=asset, passed=False, description="no snapshot has been published")
        return
    tables = SnapshotTables(snaps, m)

    def evaluate(name: str) -> AssetCheckResult:
        try:
            return checks[name][1](context, petrichor, tables)
        except Exception as exc:  # noqa: BLE001 - a file that cannot be read fails the checks that read it, not the others
            return AssetCheckResult(passed=False, description=f"could not check: {type(exc).__name__}: {str(exc)[:300]}")

    with ThreadPoolExecutor(max_workers=1) as aside, ThreadPoolExecutor(max_workers=1) as reader:
        hashed = aside.submit(evaluate, HASHED_ASIDE) if HASHED_ASIDE in selected else None
        if EVERY_TABLE in selected:  # it reads them all anyway
            tables.read_ahead(reader, read_first)
        results = {name: evaluate(name) for name in selected if name != HASHED_ASIDE}
        if hashed is not None:
            results[HASHED_ASIDE] = hashed.result()
    for name in selected:
        result = results[name]
        yield AssetCheckResult(
            check_name=name,
            asset_key=asset,
            passed=result.passed,
            severity=result.severity,
            description=result.description,
            metadata=result.metadata,
        )
