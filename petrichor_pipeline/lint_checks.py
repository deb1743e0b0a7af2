"""Wiki lint as asset checks on the snapshot: each shows its offending keys.

Not blocking: a broken link, an orphan page or a page over an outdated source makes the wiki worse to
navigate but serves nothing wrong, so it is reported (a build warning) and the snapshot is still published."""


from functools import lru_cache
from typing import Any

from dagster import AssetCheckExecutionContext, AssetCheckResult, MetadataValue, asset_check

from petrichor_pipeline.assets.snapshot import snapshot_under_check
from petrichor_pipeline.contract.manifest import read_manifest, read_table
from petrichor_pipeline.contract.schemas import SCHEMAS
from petrichor_pipeline.knowledge import lint
from petrichor_pipeline.resources import PetrichorResource
from petrichor_pipeline.versions import BUILD_VERSION, CHUNK_ALGORITHM_VERSION

MAX_KEYS_SHOWN = 100


LINTED_COLUMNS: dict[str, tuple[str, ...]] = {
    "wiki_pages": ("kb_id", "tenant", "page_key", "kind", "article_ids"),
    "wiki_links": ("kb_id", "tenant", "from_page_key", "to_page_key"),
    "wiki_sources": ("kb_id", "page_key", "article_id", "article_version"),
    "articles": ("article_id", "article_version", "chunk_algorithm_version", "build_version"),
}
"""The columns the lint functions read: the others (article texts above all) are not decoded. At 10,000
articles the four checks' reads took 5.9 s of every publish with every column, 3.8 s with these. The page
bodies are read once per snapshot, for both link checks (`_page_links`)."""
BODY_COLUMNS = ("kb_id", "tenant", "page_key", "kind", "content_md")


def _under_check(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> tuple[Any, str] | None:
    """The snapshots folder and the snapshot under check (the one this run staged, else `CURRENT`)."""
    snaps = petrichor.context().settings.snapshots_dir
    version = snapshot_under_check(context.instance, context.run.run_id, snaps)
    return None if version is None else (snaps, version)


def _rows(context: AssetCheckExecutionContext, petrichor: PetrichorResource, *names: str) -> tuple[str, list[Any]] | None:
    """The linted columns of the snapshot under check as Arrow tables, unverified: `snapshot_checksums_verify`
    checks the files."""
    found = _under_check(context, petrichor)
    if found is None:
        return None
    snaps, version = found
    m = read_manifest(snaps, version)
    return version, [_read(snaps, m, name, LINTED_COLUMNS[name]) for name in names]


def _read(snaps: Any, m: Any, name: str, columns: tuple[str, ...]) -> Any:
    omit = tuple(f.name for f in SCHEMAS[name] if f.name not in columns)
    return read_table(snaps, m, name, verify=False, omit=omit).select(list(columns))


@lru_cache(maxsize=1)
def _page_links(snaps: Any, version: str) -> lint.PageLinks:
    """The pages' body links of one snapshot (a version is never rewritten), kept for the next check: the
    two link checks of a publish share one read of the bodies and one scan for links (about 2 s at 10,000
    articles). Only the keys stay cached, not the bodies."""
    return lint.page_links(_read(snaps, read_manifest(snaps, version), "wiki_pages", BODY_COLUMNS))


def _links_rows(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> tuple[str, lint.PageLinks, Any] | None:
    found = _under_check(context, petrichor)
    if found is None:
        return None
    snaps, version = found
    links = _read(snaps, read_manifest(snaps, version), "wiki_links", LINTED_COLUMNS["wiki_links"])
    return version, _page_links(snaps, version), links


def _result(version: str, **found: list[str]) -> AssetCheckResult:
    metadata: dict[str, Any] = {"snapshot_version": version}
    for name, keys in found.items():
        metadata[name] = MetadataValue.json(keys[:MAX_KEYS_SHOWN])
        metadata[f"{name}_count"] = len(keys)
    return AssetCheckResult(passed=not any(found.values()), metadata=metadata)


def _none() -> AssetCheckResult:
    return AssetCheckResult(passed=False, description="no snapshot has been published")


@asset_check(asset="snapshot", description="Every [[pageKey|name]] link and every link row points at an existing page.")
def wiki_links_resolve(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> AssetCheckResult:
    found = _links_rows(context, petrichor)
    if found is None:
        return _none()
    version, pages, links = found
    return _result(version, broken_links=lint.broken_links(pages, links))


@asset_check(asset="snapshot", description="Every entity and concept page is linked from another page.")
def wiki_has_no_orphan_pages(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> AssetCheckResult:
    found = _links_rows(context, petrichor)
    if found is None:
        return _none()
    version, pages, links = found
    return _result(version, orphan_pages=lint.orphan_pages(pages, links))


@asset_check(asset="snapshot", description="No page rests on a deleted article or on an older version of one.")
def wiki_sources_are_current(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> AssetCheckResult:
    found = _rows(context, petrichor, "wiki_pages", "wiki_sources", "articles")
    if found is None:
        return _none()
    version, (pages, sources, articles) = found
    outdated = lint.pages_with_outdated_sources(pages, sources, articles)
    return _result(version, pages_with_deleted_sources=outdated["deleted"], pages_with_stale_sources=outdated["stale"])


@asset_check(asset="snapshot", description="Every article was built by the current chunk algorithm and build version.")
def articles_built_by_current_code(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> AssetCheckResult:
    found = _rows(context, petrichor, "articles")
    if found is None:
        return _none()
    version, (articles,) = found
    outdated = lint.outdated_articles(articles, chunk_algorithm_version=CHUNK_ALGORITHM_VERSION, build_version=BUILD_VERSION)
    return _result(version, outdated_articles=outdated)


wiki_lint_checks = [wiki_links_resolve, wiki_has_no_orphan_pages, wiki_sources_are_current, articles_built_by_current_code]
