"""Incremental builds: one changed article rebuilds one bucket, calls the model and embeds only for it."""

from __future__ import annotations

import uuid

import pytest
from dagster import DagsterInstance

from petrichor_pipeline.builder import bucket_prefetch, publish
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.runner import run_build
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from tests.conftest import isolated_env, run_cli_build
from tests.pipeline.snapshot_io import current_version, snapshot_rows

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess

CHANGED = "petrichor-en/guides/access-control.md"
DELETED = "petrichor-zh/concepts/pageindex.md"


def test_one_changed_article_rebuilds_only_its_bucket(built_corpus, tmp_path, monkeypatch):
    corpus, data, _ = built_corpus.copy_to(tmp_path)
    before = current_version(data)
    path = corpus / CHANGED
    # a text no earlier run can have embedded: the shared vector cache must not hide the embedding
    marker = uuid.uuid4().hex[:8]
    path.write_text(
        path.read_text(encoding="utf-8")
        + f"\n\n## Rotating keys\n\nRotate key {marker} by adding the new hash, deploying, then removing the old hash.\n",
        encoding="utf-8",
    )
    aid = article_id_of(CHANGED)

    isolated_env(monkeypatch, data, corpus, tmp_path / "home")
    read_in_step, read_buckets = [], publish.read_buckets
    monkeypatch.setattr(publish, "read_buckets", lambda ctx, pool: read_in_step.append(1) or read_buckets(ctx, pool))
    with DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        build = run_build(build_context(str(data), str(corpus)), instance=instance)
    summary = build.to_json()

    assert build.ok
    assert read_in_step == [] and not bucket_prefetch._HELD  # the snapshot step took the build's prefetched reads
    assert summary["partitions"]["materialized"] == [bucket_of(aid)]
    assert summary["articles"]["built"] == 1
    bucket_run, publish_run = build.runs  # each run meters itself; the build sums its runs
    assert bucket_run.partition == bucket_of(aid) and set(bucket_run.calls_by_article) == {aid}
    assert publish_run.model_calls == 0
    assert summary["model_calls"] == bucket_run.model_calls == sum(bucket_run.calls_by_article.values()) > 0

    after = current_version(data)
    assert after != before
    embedded = ("chunks", "chunk_windows", "questions")
    old_hashes = {r["content_hash"] for t in embedded for r in snapshot_rows(data, t, before)}
    new_texts = {r["content_hash"] for t in embedded for r in snapshot_rows(data, t, after) if r["article_id"] == aid}
    # only its new texts were embedded: the marker's at least; a new text without the marker (a generated
    # question, a window) may already sit in the shared vector cache from an earlier run
    assert 0 < summary["embedded_texts"] <= len(new_texts - old_hashes)
    windows = snapshot_rows(data, "chunk_windows", after)
    assert {w["chunk_id"] for w in windows} == {c["chunk_id"] for c in snapshot_rows(data, "chunks", after)}

    for table in ("articles", "chunks", "chunk_windows", "questions", "tree_nodes"):
        old = [r for r in snapshot_rows(data, table, before) if r["article_id"] != aid]
        new = [r for r in snapshot_rows(data, table, after) if r["article_id"] != aid]
        assert old == new, table


def test_deleted_article_disappears_with_its_wiki_contribution(built_corpus, tmp_path):
    corpus, data, _ = built_corpus.copy_to(tmp_path)
    before = current_version(data)
    (corpus / DELETED).unlink()
    aid = article_id_of(DELETED)

    summary = run_cli_build(data, corpus, tmp_path / "home")

    assert summary["_exit_code"] == 0 and summary["partitions"]["materialized"] == [bucket_of(aid)]
    after = current_version(data)
    for table in ("articles", "chunks", "questions", "tree_nodes"):
        assert not [r for r in snapshot_rows(data, table, after) if r["article_id"] == aid], table
    for page in snapshot_rows(data, "wiki_pages", after):
        assert aid not in page["article_ids"]
    only_deleted = {(p["kb_id"], p["page_key"]) for p in snapshot_rows(data, "wiki_pages", before) if p["article_ids"] == [aid]}
    assert only_deleted
    assert not only_deleted & {(p["kb_id"], p["page_key"]) for p in snapshot_rows(data, "wiki_pages", after)}


def test_fresh_buckets_inside_the_run_range_are_left_alone_and_the_corpus_is_scanned_once(built_corpus, tmp_path, monkeypatch):
    """Two edits far apart: one run over the range between them, whose steps skip the fresh buckets inside it
    (their warehouse files untouched, their recorded state kept), and one corpus scan for the whole build."""
    from petrichor_core.config import BUCKETS
    from petrichor_pipeline.builder import context as build_context_module
    from petrichor_pipeline.builder.steps.articles import current_bucket_versions
    from petrichor_pipeline.definitions import PARTITIONED_ASSETS
    from petrichor_pipeline.staleness import stale_buckets

    corpus, data, _ = built_corpus.copy_to(tmp_path)
    by_bucket: dict[str, list[str]] = {}
    for path in sorted(corpus.rglob("*.md")):
        rel = path.relative_to(corpus).as_posix()
        if not any(part.startswith(("_", ".")) for part in rel.split("/")):
            by_bucket.setdefault(bucket_of(article_id_of(rel)), []).append(rel)
    used = [b for b in BUCKETS if b in by_bucket]
    first, last = used[0], used[-1]
    inside = [b for b in used if first < b < last]
    assert inside, "the bundled corpus has articles in at least three buckets"
    for rel in (by_bucket[first][0], by_bucket[last][0]):
        (corpus / rel).write_text((corpus / rel).read_text(encoding="utf-8") + "\n\n## Added\n\nA new paragraph.\n", encoding="utf-8")
    untouched = {p: p.stat().st_mtime_ns for b in inside for p in (data / "warehouse").glob(f"*/bucket={b}.*")}
    assert untouched

    scans = []
    original = build_context_module.scan_corpus
    monkeypatch.setattr(build_context_module, "scan_corpus", lambda *a, **kw: scans.append(1) or original(*a, **kw))
    isolated_env(monkeypatch, data, corpus, tmp_path / "home")
    with DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        build = run_build(build_context(str(data), str(corpus)), instance=instance, parallel=False)
        assert build.ok and build.published, build.to_json()
        assert build.to_json()["partitions"]["materialized"] == list(BUCKETS[BUCKETS.index(first) : BUCKETS.index(last) + 1])
        assert build.to_json()["articles"]["built"] == 2
        assert len(scans) == 1
        assert {p: p.stat().st_mtime_ns for p in untouched} == untouched
        ctx = build_context(str(data), str(corpus))
        assert stale_buckets(instance, PARTITIONED_ASSETS, current_bucket_versions(ctx), ctx.build_key()) == []
    assert not list((data / "cache" / "scans").glob("*"))  # the handed-over scan is removed with the build


def test_an_incremental_wiki_reuses_unchanged_pages_and_equals_a_full_aggregation(built_corpus, tmp_path, monkeypatch):

    from dagster import AssetKey

    from petrichor_core.config import BUCKETS
    from petrichor_core.contract.schemas import CANDIDATE_SCHEMA
    from petrichor_pipeline.builder.warehouse import Warehouse
    from petrichor_pipeline.knowledge.aggregate import aggregate_wiki
    from petrichor_pipeline.knowledge.wiki import ArticleKnowledge
    from tests.pipeline.snapshot_io import KEYS

    corpus, data, _ = built_corpus.copy_to(tmp_path)
    path = corpus / CHANGED
    path.write_text(path.read_text(encoding="utf-8") + "\n\n## Audit\n\nEvery role change is written to the audit log.\n", encoding="utf-8")
    (corpus / DELETED).unlink()

    isolated_env(monkeypatch, data, corpus, tmp_path / "home")
    with DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        build = run_build(build_context(str(data), str(corpus)), instance=instance, parallel=False)
        assert build.ok and build.published, build.to_json()
        event = instance.get_latest_materialization_event(AssetKey("wiki_pages"))
    meta = {k: v.value for k, v in event.asset_materialization.metadata.items()}
    assert meta["pages_reused"] > meta["pages_built"] > 0

    deleted = article_id_of(DELETED)
    table = Warehouse(data / "warehouse").read_all_buckets("wiki_candidates", BUCKETS, CANDIDATE_SCHEMA)
    live = [ArticleKnowledge.from_row(r) for r in table.to_pylist() if r["article_id"] != deleted]
    full = aggregate_wiki(live)
    for name, rows in (("wiki_pages", full.pages), ("wiki_links", full.links), ("wiki_sources", full.sources)):
        expected = sorted(rows, key=lambda r: tuple(str(r[k]) for k in KEYS[name]))
        published = [{k: r[k] for k in expected[0]} for r in snapshot_rows(data, name)]
        assert published == expected, name


def test_an_edited_article_asks_the_model_only_about_its_changed_chunks(built_corpus, tmp_path, monkeypatch):
    """Questions are remembered per chunk request: appending a section asks about the new chunk alone, the
    article's other chunks keep their questions, and `--full` asks about every chunk again."""
    from petrichor_core.models.offline.model import OfflineChatModel

    corpus, data, _ = built_corpus.copy_to(tmp_path)
    before = current_version(data)
    path = corpus / CHANGED
    path.write_text(
        path.read_text(encoding="utf-8") + "\n\n## Rotating keys\n\nAdd the new hash, deploy, then remove the old one.\n", encoding="utf-8"
    )
    aid = article_id_of(CHANGED)
    asked: list[str] = []
    original = OfflineChatModel.generate_questions
    monkeypatch.setattr(
        OfflineChatModel, "generate_questions", lambda self, chunks, ctx: asked.extend(c.content for c in chunks) or original(self, chunks, ctx)
    )
    isolated_env(monkeypatch, data, corpus, tmp_path / "home")
    with DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        assert run_build(build_context(str(data), str(corpus)), instance=instance, parallel=False).ok
        after = current_version(data)
        old_chunks = {c["chunk_id"]: c for c in snapshot_rows(data, "chunks", before) if c["article_id"] == aid}
        new_chunks = {c["chunk_id"]: c for c in snapshot_rows(data, "chunks", after) if c["article_id"] == aid}
        known = {(c["heading"], c["content"]): cid for cid, c in old_chunks.items()}
        changed = [c["content"] for c in new_chunks.values() if (c["heading"], c["content"]) not in known]
        assert changed and len(changed) < len(new_chunks)
        assert asked == changed, "only the chunks whose request changed were asked about"

        def questions_of(version: str, chunk_id: str) -> list[str]:
            return [q["question"] for q in snapshot_rows(data, "questions", version) if q["chunk_id"] == chunk_id]

        for cid, c in new_chunks.items():
            if (c["heading"], c["content"]) in known:
                assert questions_of(after, cid) == questions_of(before, known[(c["heading"], c["content"])]) != []

        asked.clear()
        assert run_build(build_context(str(data), str(corpus), True), instance=instance, parallel=False).ok
        assert sorted(asked) == sorted(c["content"] for c in snapshot_rows(data, "chunks", current_version(data))), "--full asks again"
        assert [r["question"] for r in snapshot_rows(data, "questions", current_version(data))] == [
            r["question"] for r in snapshot_rows(data, "questions", after)
        ]
