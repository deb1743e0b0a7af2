"""Warnings and failed files reach the build summary whole, as typed records (no Dagster run needed)."""

from __future__ import annotations

import itertools

import pyarrow as pa

from petrichor_pipeline.assets._metadata import UI_ISSUES, bucket_metadata
from petrichor_pipeline.builder.incremental import BucketResult
from petrichor_pipeline.builder.issues import BuildWarning, FileError, read_run_issues, write_run_issues
from petrichor_pipeline.builder.steps.articles import scan_buckets
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.runner import BuildSummary, _count_articles
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from tests.pipeline.tiny_corpus import build, write_corpus

BAD = 200


def test_every_failed_file_of_the_scan_is_in_the_json(tmp_path, monkeypatch):
    monkeypatch.setenv("PETRICHOR_EMBED", "off")
    corpus = write_corpus(tmp_path / "corpus", {"kb/good.md": "# Good\n\nPort 8000.\n", **{f"kb/bad{i:03}.md": "" for i in range(BAD)}})
    summary = BuildSummary()
    _count_articles(scan_buckets(build_context(str(tmp_path / "data"), str(corpus))), summary, set())
    doc = summary.to_json()
    assert len(doc["errors"]) == BAD and summary.articles["failed"] == BAD and summary.articles["total"] == 1
    assert sorted(e["path"] for e in doc["errors"]) == [f"kb/bad{i:03}.md" for i in range(BAD)]
    assert all(e == {"path": e["path"], "reason": "empty file"} for e in doc["errors"])


def test_a_bucket_run_hands_over_every_record_while_the_ui_shows_the_first(tmp_path):
    n = UI_ISSUES * 3
    result = BucketResult(
        "chunks",
        "0a",
        pa.table({"chunk_id": pa.array([], pa.string())}),
        failed=[FileError(f"kb/f{i}.md", "chunks: ValueError: boom") for i in range(n)],
        warnings=[BuildWarning(f"heading {i} too long", f"kb/w{i}.md") for i in range(n)] + [BuildWarning("embedding failed")],
    )
    meta = bucket_metadata(result, ("chunk_id",))
    assert len(meta["failures"].value) == UI_ISSUES and len(meta["warning_list"].value) == UI_ISSUES

    write_run_issues(tmp_path, "run-1", result.asset, result.bucket, result.warnings, result.failed)
    issues = read_run_issues(tmp_path, "run-1")
    assert issues.failed["chunks"] == result.failed and issues.warnings["chunks"] == result.warnings
    assert not (tmp_path / "_run_issues" / "run-1").exists()  # read once

    summary = BuildSummary(warnings=issues.warnings["chunks"], errors=issues.failed["chunks"])
    doc = summary.to_json()
    assert len(doc["errors"]) == n and doc["errors"][0] == {"path": "kb/f0.md", "reason": "chunks: ValueError: boom"}
    assert doc["warnings"][0] == "kb/w0.md: heading 0 too long" and doc["warnings"][-1] == "embedding failed"
    assert doc["warning_details"][-1] == {"path": None, "message": "embedding failed"}


def _paths_in_one_bucket(prefix: str, n: int) -> list[str]:
    """`n` paths under `kb/` whose articles share one hash bucket, so a per-bucket cap would show."""
    bucket = bucket_of(article_id_of(f"kb/{prefix}0.md"))
    paths = (f"kb/{prefix}{i}.md" for i in range(10**6))
    return list(itertools.islice((p for p in paths if bucket_of(article_id_of(p)) == bucket), n))


def test_petrichor_build_json_lists_every_failed_file_and_every_warning(tmp_path):
    """200 files the scan refuses and more warned articles than a bucket's metadata shows, all in one
    bucket: `petrichor build --json` names each of them."""
    bad = _paths_in_one_bucket("bad", BAD)
    warned = _paths_in_one_bucket("warned", UI_ISSUES + 5)
    files: dict[str, str | bytes] = {"kb/good.md": "# Good\n\nPort 8000.\n"}
    files.update({p: b"\xff\xfe\xfa not text" if i % 2 else "---\ntitle: [unclosed\n---\n\nBody.\n" for i, p in enumerate(bad)})
    files.update({p: f"---\ncolour: blue\n---\n\n# Warned {i}\n\nPort {i}.\n" for i, p in enumerate(warned)})
    corpus = write_corpus(tmp_path / "corpus", files)

    doc = build(tmp_path / "data", corpus, tmp_path / "home")

    assert doc["_exit_code"] == 0 and doc["published"], doc["failed_run"]
    assert sorted(e["path"] for e in doc["errors"]) == sorted(bad)
    reasons = {e["reason"].split(":")[0] for e in doc["errors"]}
    assert reasons == {"invalid UTF-8 at byte 0", "broken front matter"}, reasons
    assert doc["articles"]["failed"] == BAD and doc["articles"]["total"] == 1 + len(warned)
    unknown = [w for w in doc["warning_details"] if w["message"] == "unknown front matter key 'colour' ignored"]
    assert sorted(w["path"] for w in unknown) == sorted(warned)
    assert [w for w in doc["warnings"] if "colour" in w] == [f"{w['path']}: {w['message']}" for w in unknown]
