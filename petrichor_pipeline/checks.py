"""Asset checks on the snapshot: what a data engineer wants to see green in the UI.

They run in every publish run, on the snapshot that run staged, before `published_snapshot` may point
`CURRENT` at it; run alone they look at `CURRENT` (`assets.snapshot.snapshot_under_check`). The integrity
checks are blocking (`blocking=True`): a snapshot that fails one would serve wrong, unverifiable or broken
data, so Dagster skips `published_snapshot`, the run fails and `CURRENT` stays where it was.
"""


from typing import Any

import pyarrow.compute as pc
from dagster import AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity, asset_check

from petrichor_pipeline.assets.snapshot import snapshot_under_check
from petrichor_pipeline.build.scan_handoff import SCAN_TAG
from petrichor_pipeline.contract.current import verify_snapshot
from petrichor_pipeline.contract.manifest import IntegrityError, Manifest, read_manifest, read_table
from petrichor_pipeline.contract.schemas import SCHEMAS
from petrichor_pipeline.resources import PetrichorResource
from petrichor_pipeline.versions import BUILD_VERSION, CHUNK_ALGORITHM_VERSION


def _current(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> tuple[Any, Manifest | None]:
    """The snapshots folder and the manifest of the snapshot under check."""
    snaps = petrichor.context().settings.snapshots_dir
    version = snapshot_under_check(context.instance, context.run.run_id, snaps)
    return snaps, (read_manifest(snaps, version) if version else None)


def read_table_unverified(snaps: Any, m: Manifest, name: str):
    """The content checks below see the files as they are; `snapshot_checksums_verify` reports the checksums."""
    return read_table(snaps, m, name, verify=False)


def _none() -> AssetCheckResult:
    return AssetCheckResult(passed=False, description="no snapshot has been published")


@asset_check(asset="snapshot", blocking=True, description="Every snapshot table satisfies its pandera schema.")
def snapshot_schemas_valid(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> AssetCheckResult:
    """Blocking: serving reads every table by its schema; a table that breaks it fails requests or answers with wrong fields."""
    from pandera.errors import SchemaError

    from petrichor_pipeline.contract.schemas import validate_table

    snaps, m = _current(context, petrichor)
    if m is None:
        return _none()
    failures = {}
    for name in SCHEMAS:
        try:
            validate_table(name, read_table_unverified(snaps, m, name))
        except SchemaError as exc:
            failures[name] = str(exc)[:300]
    return AssetCheckResult(passed=not failures, metadata={"snapshot_version": m.version, "failures": failures})


@asset_check(asset="snapshot", blocking=True, description="No chunk without its article; every question points at an existing chunk.")
def snapshot_referential_integrity(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> AssetCheckResult:
    """Blocking: an orphan chunk or question is text without an article, so without its tenant and visibility: it could be served to anyone."""
    snaps, m = _current(context, petrichor)
    if m is None:
        return _none()
    arts = read_table_unverified(snaps, m, "articles").column("article_id")
    chunks = read_table_unverified(snaps, m, "chunks")
    questions = read_table_unverified(snaps, m, "questions")
    orphan_chunks = chunks.num_rows - pc.sum(pc.is_in(chunks.column("article_id"), value_set=arts)).as_py() if chunks.num_rows else 0
    orphan_questions = (
        questions.num_rows - pc.sum(pc.is_in(questions.column("chunk_id"), value_set=chunks.column("chunk_id"))).as_py()
        if questions.num_rows
        else 0
    )
    return AssetCheckResult(
        passed=orphan_chunks == 0 and orphan_questions == 0,
        metadata={"orphan_chunks": int(orphan_chunks or 0), "orphan_questions": int(orphan_questions or 0)},
    )


@asset_check(asset="snapshot", blocking=True, description="Vector tables hold only vectors of the manifest's fingerprint and dimension.")
def snapshot_vector_dimensions(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> AssetCheckResult:
    """Blocking: a vector of another model or dimension makes every vector search of the snapshot fail or rank nonsense."""
    snaps, m = _current(context, petrichor)
    if m is None:
        return _none()
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


@asset_check(
    asset="snapshot",
    blocking=True,
    description="No stale article: every chunk is the exact slice of its article version it claims to be, built "
    "by the current chunker and build version; also reports articles changed in the corpus since publishing.",
)
def snapshot_has_no_stale_articles(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> AssetCheckResult:
    """Blocking: a chunk that is not the slice of its article it claims quotes and cites text the article does not hold."""
    from petrichor_pipeline.build.steps.articles import scan_buckets

    snaps, m = _current(context, petrichor)
    if m is None:
        return _none()
    columns = ["article_id", "content", "chunk_algorithm_version", "build_version", "article_version"]
    arts = {r["article_id"]: r for r in read_table_unverified(snaps, m, "articles").select(columns).to_pylist()}
    stale = set()
    for aid, a in arts.items():
        if a["chunk_algorithm_version"] != CHUNK_ALGORITHM_VERSION or a["build_version"] != BUILD_VERSION:
            stale.add(aid)
    for c in read_table_unverified(snaps, m, "chunks").select(["article_id", "content", "start", "end"]).to_pylist():
        art = arts.get(c["article_id"])
        if art is None or art["content"][c["start"] : c["end"]] != c["content"]:
            stale.add(c["article_id"])
    ctx = petrichor.context()
    if scan_id := context.run.tags.get(SCAN_TAG):  # the build's planning scan, as its runs receive it
        ctx.adopt_scan(scan_id)
    corpus = {a["article_id"]: a["article_version"] for rows, _ in scan_buckets(ctx).values() for a in rows}
    moved = sorted(aid for aid, v in corpus.items() if arts.get(aid, {}).get("article_version") != v)
    return AssetCheckResult(
        passed=not stale,
        metadata={"stale_articles": sorted(stale)[:50], "changed_in_corpus_since_publish": moved[:50]},
    )


@asset_check(asset="snapshot", blocking=True, description="Every file and vector table version matches the manifest's checksums, as serving verifies them.")
def snapshot_checksums_verify(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> AssetCheckResult:
    """Blocking: serving refuses a snapshot whose files do not match the manifest, so publishing one would take search down."""
    snaps, m = _current(context, petrichor)
    if m is None:
        return _none()
    try:
        verify_snapshot(petrichor.context().settings.data_dir, m.version)
    except IntegrityError as exc:
        return AssetCheckResult(passed=False, metadata={"snapshot_version": m.version, "failure": str(exc)[:300]})
    return AssetCheckResult(passed=True, metadata={"snapshot_version": m.version})


snapshot_checks = [snapshot_checksums_verify, snapshot_schemas_valid, snapshot_referential_integrity, snapshot_vector_dimensions, snapshot_has_no_stale_articles]
