"""Wiki lint as asset checks on the snapshot: each shows its offending keys.

Not blocking: a broken link, an orphan page or a page over an outdated source makes the wiki worse to
navigate but serves nothing wrong, so it is reported (a build warning) and the snapshot is still published.
They run in the integrity checks' step (`snapshot_checks`), which reads each table once; the pages' body
links are scanned once for both link checks."""

from typing import Any

from dagster import AssetCheckExecutionContext, AssetCheckResult, MetadataValue

from petrichor_core.versions import BUILD_VERSION, CHUNK_ALGORITHM_VERSION
from petrichor_pipeline.builder.link_cache import linked_lists
from petrichor_pipeline.checks import Check, SnapshotTables
from petrichor_pipeline.knowledge import lint
from petrichor_pipeline.resources import PetrichorResource

MAX_KEYS_SHOWN = 100
BODY_COLUMNS = ("kb_id", "tenant", "page_key", "kind", "content_md")
LINT_TABLES = ("wiki_pages", "wiki_links", "wiki_sources", "articles")
"""The tables the lint reads, in the order it reads them."""


def _result(tables: SnapshotTables, **found: list[str]) -> AssetCheckResult:
    metadata: dict[str, Any] = {"snapshot_version": tables.manifest.version}
    for name, keys in found.items():
        metadata[name] = MetadataValue.json(keys[:MAX_KEYS_SHOWN])
        metadata[f"{name}_count"] = len(keys)
    return AssetCheckResult(passed=not any(found.values()), metadata=metadata)


LINK_CACHE = ("cache", "body_links.arrow")
"""Where under the data folder the page bodies' links are kept between checks (`builder.link_cache`)."""


def _page_links(tables: SnapshotTables, petrichor: PetrichorResource) -> lint.PageLinks:
    def compute() -> lint.PageLinks:
        pages = tables["wiki_pages"].select(list(BODY_COLUMNS))
        cache = petrichor.context().settings.data_dir.joinpath(*LINK_CACHE)
        return lint.page_links(pages, linked_lists(pages.column("content_md"), cache))

    return tables.derived("page_links", compute)


def links_resolve(context: AssetCheckExecutionContext, petrichor: PetrichorResource, tables: SnapshotTables) -> AssetCheckResult:
    return _result(tables, broken_links=lint.broken_links(_page_links(tables, petrichor), tables["wiki_links"]))


def no_orphan_pages(context: AssetCheckExecutionContext, petrichor: PetrichorResource, tables: SnapshotTables) -> AssetCheckResult:
    return _result(tables, orphan_pages=lint.orphan_pages(_page_links(tables, petrichor), tables["wiki_links"]))


def sources_are_current(context: AssetCheckExecutionContext, petrichor: PetrichorResource, tables: SnapshotTables) -> AssetCheckResult:
    outdated = lint.pages_with_outdated_sources(tables["wiki_pages"], tables["wiki_sources"], tables["articles"])
    return _result(tables, pages_with_deleted_sources=outdated["deleted"], pages_with_stale_sources=outdated["stale"])


def built_by_current_code(context: AssetCheckExecutionContext, petrichor: PetrichorResource, tables: SnapshotTables) -> AssetCheckResult:
    outdated = lint.outdated_articles(tables["articles"], chunk_algorithm_version=CHUNK_ALGORITHM_VERSION, build_version=BUILD_VERSION)
    return _result(tables, outdated_articles=outdated)


LINT_CHECKS: dict[str, tuple[str, Check]] = {
    "wiki_links_resolve": ("Every [[pageKey|name]] link and every link row points at an existing page.", links_resolve),
    "wiki_has_no_orphan_pages": ("Every entity and concept page is linked from another page.", no_orphan_pages),
    "wiki_sources_are_current": ("No page rests on a deleted article or on an older version of one.", sources_are_current),
    "articles_built_by_current_code": ("Every article was built by the current chunk algorithm and build version.", built_by_current_code),
}
"""Check name -> (description, function): the wiki lint of every staged snapshot."""
