"""The article history store: records written once per version and scope and verified by their hash and
scope, collection that keeps every record a retained snapshot or a pin cites, records a snapshot still
cites written again when lost, pins written and removed with their traces."""

from __future__ import annotations

import json
import os
import time

import pyarrow.parquet as pq

from petrichor_core.contract.history import ArticleRecord, article_record_path, pin_path, read_article_records, scope_key
from petrichor_core.contract.manifest import MANIFEST_FILE
from petrichor_core.contract.schemas import to_table
from petrichor_core.text.normalize import article_version
from petrichor_pipeline.builder.history import DAY_S, collect_history, record_articles
from petrichor_serving.agent.trace import Trace, TraceStore


def _article(aid: str, content: str) -> dict:
    return {
        "article_id": aid,
        "kb_id": "kb",
        "tenant": "t",
        "title": aid.upper(),
        "content": content,
        "article_version": article_version(aid.upper(), content),
    }


def _chunks(aid: str) -> list[dict]:
    return [{"chunk_id": f"{aid}:chunk-000", "article_id": aid, "start": 0, "end": 5, "heading_path": ["Top"]}]


def _snapshot(data, name: str, rows: list[dict]) -> None:
    folder = data / "snapshots" / name
    folder.mkdir(parents=True)
    pq.write_table(to_table("articles", rows), folder / "articles.parquet")
    pq.write_table(to_table("chunks", [c for r in rows for c in _chunks(r["article_id"])]), folder / "chunks.parquet")
    (folder / MANIFEST_FILE).write_text("{}", encoding="utf-8")


def _path(data, row: dict):
    return article_record_path(data, row["article_version"], scope_key(row))


def _one(data, row: dict) -> ArticleRecord | None:
    found = [r for r in read_article_records(data, row["article_version"]) if scope_key(r.article) == scope_key(row)]
    return found[0] if found else None


def _age(path, days: float) -> None:
    old = time.time() - days * DAY_S
    os.utime(path, (old, old))


def test_records_resolve_by_version_and_a_tampered_one_does_not(tmp_path):
    a = _article("a1", "Hello world, first text.")
    assert record_articles(tmp_path, to_table("articles", [a]), to_table("chunks", _chunks("a1"))) == 1
    assert record_articles(tmp_path, to_table("articles", [a]), to_table("chunks", _chunks("a1"))) == 0  # written once
    rec = _one(tmp_path, a)
    assert rec is not None and rec.article["content"] == a["content"] and rec.heading_path_at(2) == ["Top"] and rec.heading_path_at(9) == []
    path = _path(tmp_path, a)
    path.write_text(path.read_text(encoding="utf-8").replace("Hello", "Jello"), encoding="utf-8")
    assert read_article_records(tmp_path, a["article_version"]) == []
    assert read_article_records(tmp_path, "../../etc/passwd") == []


def test_collection_keeps_what_a_snapshot_or_a_pin_cites_and_recent_versions(tmp_path):
    in_snapshot, pinned, recent, old = (_article(f"a{i}", f"text {i}") for i in range(4))
    record_articles(tmp_path, to_table("articles", [in_snapshot, pinned, recent, old]), to_table("chunks", []))
    for a in (in_snapshot, pinned, old):
        _age(_path(tmp_path, a), 10)
    _snapshot(tmp_path, "20250101T000000000000Z-aaaaaa", [in_snapshot])
    pin = pin_path(tmp_path, "trace1")
    pin.parent.mkdir(parents=True)
    pin.write_text(json.dumps({"cites": [["a1", pinned["article_version"]]]}), encoding="utf-8")
    stale_pin = pin_path(tmp_path, "trace0")
    stale_pin.write_text(json.dumps({"cites": [["a3", old["article_version"]]]}), encoding="utf-8")
    _age(stale_pin, 40)

    removed = collect_history(tmp_path, tmp_path / "snapshots", keep_days=5, pin_days=30)
    assert removed == [old["article_version"]]
    assert not stale_pin.exists() and pin.exists()
    for a in (in_snapshot, pinned, recent):
        assert _one(tmp_path, a) is not None


def test_a_trace_pins_its_cited_versions_until_it_is_evicted(tmp_path):
    store = TraceStore(capacity=1, pins_data_dir=tmp_path)
    first, second = Trace(snapshot_version="s"), Trace(snapshot_version="s")
    first.cites = [("a1", "f" * 64)]
    store.put("key:x", first)
    assert json.loads(pin_path(tmp_path, first.trace_id).read_text(encoding="utf-8")) == {"cites": [["a1", "f" * 64]]}
    store.put("key:x", second)  # evicts the first; the second cites nothing and pins nothing
    assert not pin_path(tmp_path, first.trace_id).exists() and not pin_path(tmp_path, second.trace_id).exists()


def test_a_later_snapshot_stores_only_its_new_versions_with_their_own_spans_and_touches_the_rest(tmp_path):
    a, b = _article("a1", "First text."), _article("b1", "Second text.")
    assert record_articles(tmp_path, to_table("articles", [a]), to_table("chunks", _chunks("a1"))) == 1
    _age(_path(tmp_path, a), 3)
    twin = dict(b, article_id="c1")  # another article of the same text: a record of its own, for its own scope
    chunks = to_table("chunks", _chunks("a1") + [dict(_chunks("b1")[0], heading_path=["B"]), dict(_chunks("c1")[0], heading_path=["C"])])
    assert record_articles(tmp_path, to_table("articles", [a, b, twin]), chunks) == 2
    assert time.time() - _path(tmp_path, a).stat().st_mtime < DAY_S  # touched
    assert {(r.article["article_id"], r.heading_path_at(2)[0]) for r in read_article_records(tmp_path, b["article_version"])} == {
        ("b1", "B"),
        ("c1", "C"),
    }


def test_a_version_published_under_a_new_scope_gets_a_record_of_its_own_beside_the_old_one(tmp_path):
    """An article moved to another tenant, then shared, keeps its text and version: three scopes, three records."""
    before = _article("a1", "Moved text.")
    moved = dict(before, tenant="other")
    shared = dict(moved, visibility="public")
    for row in (before, moved, shared):
        assert record_articles(tmp_path, to_table("articles", [row]), to_table("chunks", _chunks("a1"))) == 1
    scopes = {(r.article["tenant"], r.article["visibility"]) for r in read_article_records(tmp_path, before["article_version"])}
    assert scopes == {("t", None), ("other", None), ("other", "public")}


def test_a_record_whose_row_is_not_the_scope_its_name_says_is_refused(tmp_path):
    a = _article("a1", "Scoped text.")
    record_articles(tmp_path, to_table("articles", [a]), to_table("chunks", _chunks("a1")))
    path = _path(tmp_path, a)
    path.write_text(path.read_text(encoding="utf-8").replace('"tenant": "t"', '"tenant": "x"'), encoding="utf-8")
    assert read_article_records(tmp_path, a["article_version"]) == []


def test_a_record_written_before_scopes_is_read_under_its_own_row_and_kept_while_its_version_is_cited(tmp_path):
    a = _article("a1", "Older layout.")
    legacy = article_record_path(tmp_path, a["article_version"], None)
    legacy.parent.mkdir(parents=True)
    legacy.write_text(ArticleRecord(article=a, spans=[]).to_json(), encoding="utf-8")
    _age(legacy, 10)
    assert [r.article["tenant"] for r in read_article_records(tmp_path, a["article_version"])] == ["t"]
    _snapshot(tmp_path, "20250101T000000000000Z-aaaaaa", [dict(a, tenant="other")])
    assert collect_history(tmp_path, tmp_path / "snapshots", keep_days=5, pin_days=30) == []
    assert legacy.exists()


def test_records_a_snapshot_on_disk_cites_are_written_again_from_it_when_the_history_folder_is_lost(tmp_path):
    """`data/history/` deleted: the next publish's collection restores every record a snapshot still holds."""
    import shutil

    kept, edited = _article("a1", "Still here."), _article("b1", "Edited since.")
    _snapshot(tmp_path, "20250101T000000000000Z-aaaaaa", [kept, edited])
    _snapshot(tmp_path, "20250102T000000000000Z-bbbbbb", [kept])
    shutil.rmtree(tmp_path / "history", ignore_errors=True)
    assert collect_history(tmp_path, tmp_path / "snapshots", keep_days=0, pin_days=30) == []
    for row in (kept, edited):
        rec = _one(tmp_path, row)
        assert rec is not None and rec.article["content"] == row["content"] and rec.heading_path_at(0) == ["Top"]
