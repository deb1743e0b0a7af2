"""Snapshot contract helpers: atomic publish, CURRENT, garbage collection, manifest validation."""

from __future__ import annotations

import pytest

from petrichor_core.contract.current import collect_garbage, publish, read_current
from petrichor_core.contract.manifest import Manifest, read_manifest
from petrichor_core.contract.schemas import to_table, validate_table
from petrichor_core.versions import SCHEMA_VERSION


def _manifest(version: str) -> Manifest:
    return Manifest(version, "2026-11-30T00:00:00+00:00", None, SCHEMA_VERSION, 2, 4, "offline", None)


def test_publish_writes_manifest_then_points_current(tmp_path):
    publish(tmp_path, _manifest("v1"))
    assert read_current(tmp_path) == "v1" and read_manifest(tmp_path, "v1").version == "v1"
    assert not list(tmp_path.glob("**/*.tmp"))


def test_gc_keeps_newest_and_current_and_builds_in_flight(tmp_path):
    for v in ("v1", "v2", "v3", "v4"):
        publish(tmp_path, _manifest(v))
    (tmp_path / "CURRENT").write_text("v1\n")  # an operator rolled back to v1
    (tmp_path / "v0-partial").mkdir()  # an abandoned build, older than the newest complete one
    (tmp_path / "v9-inflight").mkdir()  # a build still writing: newer than every complete snapshot
    removed = collect_garbage(tmp_path, keep=2)
    assert sorted(removed) == ["v0-partial", "v2"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["v1", "v3", "v4", "v9-inflight"]


def test_manifest_of_another_schema_version_is_refused(tmp_path):
    m = _manifest("v1")
    m.schema_version = SCHEMA_VERSION + 1
    publish(tmp_path, m)
    with pytest.raises(ValueError, match="schema_version"):
        read_manifest(tmp_path, "v1")


def test_pandera_schema_rejects_broken_rows():
    from pandera.errors import SchemaError

    good = [
        {
            "chunk_id": "a:chunk-001",
            "article_id": "a",
            "kb_id": "kb",
            "tenant": "t",
            "key": "chunk-001",
            "position": 0,
            "heading": "H",
            "heading_path": [],
            "content": "x",
            "start": 0,
            "end": 1,
            "index_text": "x",
            "content_hash": "h",
        }
    ]
    validate_table("chunks", to_table("chunks", good))
    with pytest.raises(SchemaError):
        validate_table("chunks", to_table("chunks", good + good))  # duplicate chunk_id
    with pytest.raises(SchemaError):
        validate_table("chunks", to_table("chunks", [dict(good[0], start=5, end=1)]))


@pytest.mark.parametrize("content", ["x", "", None])
def test_unread_text_columns_get_the_verdict_a_full_validation_gives(content):
    """Serving checks a mapped text column from its validity and offsets alone: same rules, same verdicts."""
    from pandera.errors import SchemaError

    row = {
        "chunk_id": "a:chunk-001",
        "article_id": "a",
        "kb_id": "kb",
        "tenant": "t",
        "key": "chunk-001",
        "position": 0,
        "heading": "H",
        "heading_path": [],
        "content": content,
        "start": 0,
        "end": 1,
        "index_text": "x",
        "content_hash": "h",
    }
    table = to_table("chunks", [row, dict(row, chunk_id="a:chunk-002", content="y")])
    verdicts = []
    for unread in ((), ("content",)):
        try:
            validate_table("chunks", table, unread=unread)
            verdicts.append("valid")
        except SchemaError:
            verdicts.append("refused")
    assert verdicts[0] == verdicts[1] == ("valid" if content else "refused")
