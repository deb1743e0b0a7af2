"""The store's side of the same rules: its `CURRENT` is parsed as the local one is (a path or an oversized
body names nothing), and a replica mirrors history records of every scope, by the layout's names only."""

from __future__ import annotations

from petrichor_core.contract.history import ArticleRecord, article_record_path, read_article_records, scope_key
from petrichor_core.object_store import SnapshotMirror
from petrichor_core.text.normalize import article_version
from tests.storage.conftest import object_store


def _put(store, key: str, body: bytes) -> None:
    store.client.put_object(Bucket=store.location.bucket, Key=store.location.key(key), Body=body)


def test_the_stores_current_names_only_a_snapshot_folder(s3_server, s3_bucket):
    store = object_store(s3_server, s3_bucket)
    for body, version in ((b"20250101T000000000000Z-aaaaaa\n", "20250101T000000000000Z-aaaaaa"), (b"../../etc\n", None), (b"v" * 4096, None)):
        _put(store, "snapshots/CURRENT", body)
        pointer = store.read_pointer()
        assert pointer.version == version and pointer.etag


def test_a_replica_mirrors_the_records_of_every_scope_and_nothing_else(s3_server, s3_bucket, tmp_path):
    store = object_store(s3_server, s3_bucket)
    row = {"article_id": "a1", "kb_id": "kb", "tenant": "acme", "title": "T", "content": "Text.", "article_version": article_version("T", "Text.")}
    moved = dict(row, tenant="globex")
    version = row["article_version"]
    for r in (row, moved):
        _put(store, f"history/articles/{version[:2]}/{version}.{scope_key(r)}.json", ArticleRecord(article=r, spans=[]).to_json().encode())
    _put(store, f"history/articles/{version[:2]}/{version}.not-a-scope.json", b"{}")
    _put(store, "history/articles/zz/elsewhere.json", b"{}")
    SnapshotMirror(store, tmp_path)._fetch_history()
    assert {r.article["tenant"] for r in read_article_records(tmp_path, version)} == {"acme", "globex"}
    assert sorted(p.name for p in (tmp_path / "history").rglob("*.json")) == sorted(
        article_record_path(tmp_path, version, scope_key(r)).name for r in (row, moved)
    )
