"""The shared hostile build: one clear outcome per bad file, every good article built and found.

Also the public face of that build: bounded search responses, nothing from outside the corpus, no
server path in `/api/snapshot`, and every wrongly typed request field a short 400, never a 500.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from petrichor_core.text.chunking import MAX_CHARS
from petrichor_core.text.limits import MAX_HEADING_CHARS, MAX_HEADING_PATH_CHARS, MAX_TITLE_CHARS, SNIPPET_MAX_CHARS
from tests.hostile.conftest import snapshot_dir
from tests.hostile.corpus import FENCE_TAIL, GOOD, HOSTILE, LINE_TAIL, OUTSIDE_SECRET

pytestmark = pytest.mark.slow  # builds the hostile corpus (once per session)


def test_the_build_succeeds_and_says_how_many_files_failed(hostile_build) -> None:
    summary = hostile_build.summary
    assert summary["_exit_code"] == 0 and summary["published"], summary["failed_run"]
    errors = sum(1 for e in HOSTILE.values() if e.outcome == "error")
    assert summary["articles"]["failed"] == errors
    assert summary["articles"]["total"] == len(GOOD) + len(HOSTILE) - errors


@pytest.mark.parametrize("path", sorted(HOSTILE))
def test_each_hostile_file_gets_one_clear_outcome(hostile_build, path: str) -> None:
    expect = HOSTILE[path]
    summary = hostile_build.summary
    errors = [e["reason"] for e in summary["errors"] if e["path"] == path]
    warnings = [w["message"] for w in summary["warning_details"] if w["path"] == path]
    if expect.outcome == "error":
        assert len(errors) == 1 and expect.says in errors[0], errors
        assert warnings == []
    else:
        assert errors == []
        if expect.outcome == "warning":
            assert len(warnings) == 1 and expect.says in warnings[0], warnings
    for text in errors + warnings:
        assert text.isascii(), text  # English


def test_every_other_article_builds_and_is_found(hostile_app) -> None:
    for path, (_, phrase) in GOOD.items():
        res = hostile_app.post("/api/knowledge/search", json={"query": phrase, "limit": 5})
        assert res.status_code == 200, res.text
        found = res.json()["candidates"]
        assert any(phrase.split()[0] in c["snippet"] for c in found), (path, found)


def test_nothing_outside_the_corpus_is_published(hostile_build, hostile_app) -> None:
    snap = snapshot_dir(hostile_build)
    for table in snap.glob("*.parquet"):
        assert OUTSIDE_SECRET.encode() not in table.read_bytes(), table.name
    res = hostile_app.post("/api/knowledge/search", json={"query": "root OUTSIDESECRET bin bash", "limit": 20})
    assert res.status_code == 200 and "OUTSIDESECRET" not in json.dumps(res.json()["candidates"])  # the query is echoed


def test_titles_and_heading_paths_are_capped_and_storage_is_linear(hostile_build) -> None:
    snap = snapshot_dir(hostile_build)
    articles = pq.read_table(snap / "articles.parquet").to_pylist()
    chunks = pq.read_table(snap / "chunks.parquet").to_pylist()
    assert all(len(a["title"]) <= MAX_TITLE_CHARS + 1 for a in articles)
    for c in chunks:
        assert len(c["content"]) <= MAX_CHARS
        assert all(len(h) <= MAX_HEADING_CHARS + 1 for h in c["heading_path"])
        assert sum(map(len, c["heading_path"])) <= MAX_HEADING_PATH_CHARS
    # what the chunks store besides their own text is bounded per chunk, not per article size
    extra = sum(len(c["index_text"]) - len(c["content"]) + len(c["heading"]) + sum(map(len, c["heading_path"])) for c in chunks)
    assert extra <= len(chunks) * 4 * (MAX_TITLE_CHARS + MAX_HEADING_PATH_CHARS)


def test_split_fences_and_lines_keep_their_tails(hostile_build) -> None:
    chunks = pq.read_table(snapshot_dir(hostile_build) / "chunks.parquet").column("content").to_pylist()
    assert any(FENCE_TAIL in c for c in chunks) and any(LINE_TAIL in c for c in chunks)


def test_search_over_the_heading_bomb_is_small(hostile_app) -> None:
    res = hostile_app.post("/api/knowledge/search", json={"query": "tidal tidal SEICHEWORD", "limit": 20})
    assert res.status_code == 200
    assert len(res.content) < 20 * 4 * (MAX_TITLE_CHARS + MAX_HEADING_PATH_CHARS + SNIPPET_MAX_CHARS) + 20_000
    assert all(len(c["snippet"]) <= SNIPPET_MAX_CHARS + 1 for c in res.json()["candidates"])


def test_snapshot_status_shows_no_server_path(hostile_app, hostile_build) -> None:
    text = hostile_app.get("/api/snapshot").text
    assert str(hostile_build.data_dir) not in text and "/tmp/" not in text


POSTS = ["/api/knowledge/search", "/api/knowledge/outline", "/api/knowledge/read", "/api/assistant/chat", "/api/public/qa/chat"]
VALID = {
    "/api/knowledge/search": {"query": "tide gauge"},
    "/api/knowledge/outline": {"article_id": "x"},
    "/api/knowledge/read": {"chunk_id": "x"},
    "/api/assistant/chat": {"question": "tide gauge"},
    "/api/public/qa/chat": {"question": "tide gauge"},
}
WRONG = [123, 1.5, True, [1], ["a", 2], {"a": 1}, "\ud800 m", "x" * 100_000]


@pytest.mark.parametrize("path", POSTS)
def test_every_field_of_every_post_is_type_checked(hostile_app, path: str) -> None:
    from petrichor_serving.app import ENDPOINTS

    model = next(e.request for e in ENDPOINTS if e.path == path)
    fields = {f.validation_alias.choices[0] if f.validation_alias else name for name, f in model.model_fields.items()}
    assert len(fields) >= 3
    for field in sorted(fields):
        for wrong in WRONG:
            raw = json.dumps({**VALID[path], field: wrong}).encode()  # a lone surrogate stays the escape "\ud800"
            res = hostile_app.post(path, content=raw, headers={"content-type": "application/json"})
            assert res.status_code < 500, (path, field, repr(wrong)[:40], res.text[:200])
            if res.status_code >= 400:
                assert len(res.json()["error"]) <= 200, (path, field)


def test_the_summary_names_the_costliest_files_and_their_steps(hostile_build) -> None:
    costliest = hostile_build.summary["costliest_files"]
    assert 0 < len(costliest) <= 10
    paths = set(GOOD) | set(HOSTILE)
    assert all(f["path"] in paths and f["steps"] for f in costliest), costliest
    assert [f["seconds"] for f in costliest] == sorted((f["seconds"] for f in costliest), reverse=True)
    assert all(abs(f["seconds"] - sum(f["steps"].values())) < 0.01 for f in costliest)
    assert {"chunks", "chunk_windows"} <= {step for f in costliest for step in f["steps"]}
