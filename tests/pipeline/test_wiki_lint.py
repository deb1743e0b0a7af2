"""Wiki lint as asset checks: green on the bundled snapshot, red with the offending key on a seeded fault."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dagster import DagsterInstance, Definitions
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_core.config import load_settings
from petrichor_core.contract.manifest import MANIFEST_FILE, file_entry
from petrichor_pipeline.definitions import all_assets
from petrichor_pipeline.knowledge import lint
from petrichor_pipeline.knowledge.wiki_links import linked_keys
from petrichor_pipeline.lint_checks import LINT_CHECKS
from petrichor_pipeline.resources import PetrichorResource, RunSettings
from petrichor_pipeline.snapshot_checks import ASSET_CHECKS
from tests.conftest import EMBED_CACHE


def _page(key: str, body: str = "", kind: str = "concept", articles: tuple[str, ...] = ("a1",)) -> dict:
    return {"kb_id": "kb", "tenant": "t", "page_key": key, "kind": kind, "content_md": body, "article_ids": list(articles)}


def _link(src: str, dst: str) -> dict:
    return {"kb_id": "kb", "tenant": "t", "from_page_key": src, "to_page_key": dst}


def test_lint_rules_name_the_offending_keys():
    pages = [
        _page("source-a1", "[[alpha|Alpha]]", kind="source"),
        _page("alpha", "see [[beta|Beta]] and [[gone|Gone]]"),
        _page("beta"),
        _page("lonely"),
    ]
    links = [_link("alpha", "beta"), _link("beta", "missing")]
    assert lint.broken_links(pages, links) == ["kb/alpha -> gone", "kb/beta -> missing"]
    assert lint.orphan_pages(pages, links) == ["kb/lonely"]  # a source page needs no incoming link

    articles = [{"article_id": "a1", "article_version": "v2", "chunk_algorithm_version": 3, "build_version": 4}]
    sources = [
        {"kb_id": "kb", "page_key": "alpha", "article_id": "a1", "article_version": "v1"},
        {"kb_id": "kb", "page_key": "beta", "article_id": "a1", "article_version": "v2"},
        {"kb_id": "kb", "page_key": "lonely", "article_id": "a9", "article_version": "v1"},
    ]
    assert lint.pages_with_outdated_sources(pages, sources, articles) == {"deleted": ["kb/lonely"], "stale": ["kb/alpha"]}
    assert lint.outdated_articles(articles, chunk_algorithm_version=3, build_version=4) == []
    assert lint.outdated_articles(articles, chunk_algorithm_version=4, build_version=4) == ["a1"]

    as_tables = [pa.Table.from_pylist(rows) for rows in (pages, links, sources, articles)]  # as the checks read them
    assert lint.broken_links(as_tables[0], as_tables[1]) == lint.broken_links(pages, links)
    assert lint.orphan_pages(as_tables[0], as_tables[1]) == ["kb/lonely"]
    assert lint.pages_with_outdated_sources(as_tables[0], as_tables[2], as_tables[3]) == {"deleted": ["kb/lonely"], "stale": ["kb/alpha"]}
    assert lint.outdated_articles(as_tables[3], chunk_algorithm_version=4, build_version=4) == ["a1"]
    shared = lint.page_links(as_tables[0])  # one pass over the bodies, read by both link checks
    assert lint.broken_links(shared, as_tables[1]) == ["kb/alpha -> gone", "kb/beta -> missing"]
    assert lint.orphan_pages(shared, as_tables[1]) == ["kb/lonely"]


KEYS = st.sampled_from(["a", "b", "c", " a", "source-x"])


def _reference(pages: list[dict], links: list[dict], sources: list[dict], articles: list[dict]) -> tuple:
    """The lint's rules read row by row in Python: the oracle of the Arrow implementation."""
    known = {(p["kb_id"], p["tenant"], p["page_key"]) for p in pages}
    body = [(p["kb_id"], p["tenant"], p["page_key"], t) for p in pages for t in linked_keys(p["content_md"] or "")]
    rows = body + [(r["kb_id"], r["tenant"], r["from_page_key"], r["to_page_key"]) for r in links]
    broken = sorted({f"{kb}/{src} -> {dst}" for kb, tenant, src, dst in rows if (kb, tenant, dst) not in known})
    linked = {(kb, tenant, dst) for kb, tenant, src, dst in rows if src != dst}
    orphans = sorted(
        f"{p['kb_id']}/{p['page_key']}" for p in pages if (p["kb_id"], p["tenant"], p["page_key"]) not in linked and p["kind"] not in lint.ROOT_KINDS
    )
    version = {a["article_id"]: a["article_version"] for a in articles}
    deleted = {f"{s['kb_id']}/{s['page_key']}" for s in sources if s["article_id"] not in version}
    deleted |= {f"{p['kb_id']}/{p['page_key']}" for p in pages if any(a not in version for a in p["article_ids"] or ())}
    stale = {f"{s['kb_id']}/{s['page_key']}" for s in sources if s["article_id"] in version and s["article_version"] != version[s["article_id"]]}
    return broken, orphans, {"deleted": sorted(deleted), "stale": sorted(stale - deleted)}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            KEYS,
            st.sampled_from(["t", "u"]),
            st.sampled_from(["concept", "source", None]),
            st.lists(KEYS, max_size=3),
            st.lists(st.sampled_from(["a1", "a2", None]), max_size=2),
        ),
        max_size=5,
    ),
    st.lists(st.tuples(KEYS, KEYS), max_size=4),
    st.lists(st.tuples(KEYS, st.sampled_from(["a1", "a2", "a3"]), st.sampled_from(["v1", "v2", None])), max_size=4),
)
def test_the_arrow_lint_reads_the_rules_as_python_does(page_specs, link_specs, source_specs):
    pages = [
        {"kb_id": "kb", "tenant": tenant, "page_key": key, "kind": kind, "content_md": " ".join(f"[[{t}|n]]" for t in targets), "article_ids": ids}
        for key, tenant, kind, targets, ids in page_specs
    ]
    links = [{"kb_id": "kb", "tenant": "t", "from_page_key": a, "to_page_key": b} for a, b in link_specs]
    sources = [{"kb_id": "kb", "page_key": key, "article_id": a, "article_version": v} for key, a, v in source_specs]
    articles = [{"article_id": "a1", "article_version": "v1"}, {"article_id": "a2", "article_version": None}]
    broken, orphans, outdated = _reference(pages, links, sources, articles)
    assert lint.broken_links(pages, links) == broken
    assert lint.orphan_pages(pages, links) == orphans
    assert lint.pages_with_outdated_sources(pages, sources, articles) == outdated


def _evaluate(data_dir, corpus_dir, monkeypatch) -> dict:
    monkeypatch.setenv("PETRICHOR_EMBED_CACHE", str(EMBED_CACHE))
    resource = PetrichorResource(settings=RunSettings.of(load_settings().with_paths(str(data_dir), str(corpus_dir))))
    d = Definitions(assets=all_assets(), asset_checks=ASSET_CHECKS, resources={"petrichor": resource})
    checks = {key for c in ASSET_CHECKS for key in c.check_keys if key.name in LINT_CHECKS}
    job = d.resolve_implicit_global_asset_job_def().get_subset(asset_check_selection=checks)
    with DagsterInstance.ephemeral() as instance:
        res = job.execute_in_process(instance=instance, raise_on_error=False)
    return {e.check_name: e for e in res.get_asset_check_evaluations()}


@pytest.mark.slow
def test_lint_checks_pass_on_the_bundled_corpus_and_catch_a_seeded_broken_link(built_corpus, tmp_path, monkeypatch):
    evals = _evaluate(built_corpus.data_dir, built_corpus.corpus_dir, monkeypatch)
    assert len(evals) == 4
    assert all(e.passed for e in evals.values()), [(n, e.metadata) for n, e in evals.items() if not e.passed]

    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir / "snapshots", data / "snapshots")
    version = (data / "snapshots" / "CURRENT").read_text().strip()
    path = data / "snapshots" / version / "wiki_pages.parquet"
    table = pq.read_table(path)
    bodies = table.column("content_md").to_pylist()
    bodies[0] += "\n\nSee also [[no-such-page|Nowhere]]."
    pq.write_table(table.set_column(table.schema.get_field_index("content_md"), "content_md", pa.array(bodies)), path)
    # a build that wrote the broken link would have recorded the file's checksum: stamp it, so only lint objects
    manifest_path = path.parent / MANIFEST_FILE
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["tables"]["wiki_pages"].update(file_entry(path))
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")

    evals = _evaluate(data, built_corpus.corpus_dir, monkeypatch)
    broken = evals["wiki_links_resolve"]
    assert not broken.passed
    page = table.column("page_key")[0].as_py()
    assert [k for k in broken.metadata["broken_links"].value if k.endswith(f"/{page} -> no-such-page")]
    assert evals["wiki_has_no_orphan_pages"].passed and evals["articles_built_by_current_code"].passed


@pytest.mark.slow
def test_a_table_that_cannot_be_read_fails_the_checks_that_read_it_and_no_other(built_corpus, tmp_path, monkeypatch):
    """With every check selected the tables are read ahead on a thread; a truncated `chunks` file still fails
    only the checks that read chunks, each saying why."""
    data = tmp_path / "data"
    for folder in ("snapshots", "lance"):
        shutil.copytree(built_corpus.data_dir / folder, data / folder)
    version = (data / "snapshots" / "CURRENT").read_text().strip()
    path = data / "snapshots" / version / "chunks.parquet"
    path.write_bytes(path.read_bytes()[:100])
    monkeypatch.setenv("PETRICHOR_EMBED_CACHE", str(EMBED_CACHE))
    resource = PetrichorResource(settings=RunSettings.of(load_settings().with_paths(str(data), str(built_corpus.corpus_dir))))
    d = Definitions(assets=all_assets(), asset_checks=ASSET_CHECKS, resources={"petrichor": resource})
    job = d.resolve_implicit_global_asset_job_def().get_subset(asset_check_selection={key for c in ASSET_CHECKS for key in c.check_keys})
    with DagsterInstance.ephemeral() as instance:
        res = job.execute_in_process(instance=instance, raise_on_error=False)
    failed = {e.check_name: e for e in res.get_asset_check_evaluations() if not e.passed}
    assert set(failed) == {"snapshot_checksums_verify", "snapshot_schemas_valid", "snapshot_referential_integrity", "snapshot_has_no_stale_articles"}
    for name in ("snapshot_schemas_valid", "snapshot_referential_integrity", "snapshot_has_no_stale_articles"):
        assert "could not check" in (failed[name].description or ""), name
