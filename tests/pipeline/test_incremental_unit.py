"""Per-article reuse inside a bucket, without Dagster: keys, failures, timeouts."""

from __future__ import annotations

import threading

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_pipeline.builder.incremental import ArticleOutput, ArticleRows, _assemble, _assemble_by_sort, per_article_step
from petrichor_pipeline.builder.issues import FileError
from petrichor_pipeline.builder.warehouse import Warehouse

SCHEMA = pa.schema([("article_id", pa.string()), ("value", pa.string())])


def _articles(*versions: str) -> list[dict]:
    return [{"article_id": f"a{i}", "path": f"kb/a{i}.md", "v": v} for i, v in enumerate(versions)]


def _step(wh, articles, build, **kw):
    return per_article_step(
        warehouse=wh, asset="t", bucket="00", schema=SCHEMA, articles=articles, build_key=lambda a: a["v"], build=build, concurrency=4, **kw
    )


def test_unchanged_articles_reuse_rows_and_only_changed_ones_build(tmp_path):
    wh = Warehouse(tmp_path)
    calls: list[str] = []

    def build(a):
        calls.append(a["article_id"])
        return ArticleOutput([{"article_id": a["article_id"], "value": a["v"]}])

    first = _step(wh, _articles("x", "y", "z"), build)
    assert sorted(first.built) == ["a0", "a1", "a2"] and first.table.num_rows == 3
    calls.clear()
    second = _step(wh, _articles("x", "y2", "z"), build)
    assert calls == ["a1"] and second.skipped == ["a0", "a2"]
    assert second.table.to_pylist() == [{"article_id": "a0", "value": "x"}, {"article_id": "a1", "value": "y2"}, {"article_id": "a2", "value": "z"}]
    forced = _step(wh, _articles("x", "y2", "z"), build, force=True)
    assert len(forced.built) == 3


def test_a_failing_article_is_reported_and_retried_next_time(tmp_path):
    wh = Warehouse(tmp_path)

    def flaky(a):
        if a["article_id"] == "a1":
            raise ValueError("boom")
        return ArticleOutput([{"article_id": a["article_id"], "value": a["v"]}])

    res = _step(wh, _articles("x", "y"), flaky)
    assert res.failed == [FileError("kb/a1.md", "t: ValueError: boom")]
    assert res.table.column("article_id").to_pylist() == ["a0"]
    again = _step(wh, _articles("x", "y"), lambda a: ArticleOutput([{"article_id": a["article_id"], "value": "ok"}]))
    assert again.built == ["a1"] and again.skipped == ["a0"]


def test_an_article_past_its_timeout_fails_without_blocking_the_bucket(tmp_path):
    release = threading.Event()

    def slow(a):
        if a["article_id"] == "a0":
            release.wait(10)
        return ArticleOutput([{"article_id": a["article_id"], "value": a["v"]}])

    try:
        res = _step(Warehouse(tmp_path), _articles("x", "y"), slow, timeout_s=0.2)
    finally:
        release.set()
    assert [f.path for f in res.failed] == ["kb/a0.md"] and "exceeded" in res.failed[0].reason
    assert res.built == ["a1"]


def test_an_unreadable_previous_file_rebuilds_its_articles_rather_than_losing_their_rows(tmp_path):
    wh = Warehouse(tmp_path)
    build = lambda a: ArticleOutput([{"article_id": a["article_id"], "value": a["v"]}])  # noqa: E731
    _step(wh, _articles("x", "y"), build)
    wh.path("t", "00").write_bytes(b"not parquet")
    again = _step(wh, _articles("x", "y"), build)
    assert sorted(again.built) == ["a0", "a1"] and again.table.num_rows == 2


ROWS = pa.schema([("article_id", pa.string()), ("n", pa.int64()), ("tags", pa.list_(pa.struct([("k", pa.string())])))])


def _rows(aid: str, count: int, tag: str) -> list[dict]:
    return [{"article_id": aid, "n": i, "tags": [{"k": f"{tag}{i}"}]} for i in range(count)]


@settings(max_examples=150, deadline=None)
@given(
    counts=st.lists(st.integers(0, 3), min_size=1, max_size=8),
    reused=st.lists(st.booleans(), min_size=8, max_size=8),
    order=st.permutations(range(8)),
    split=st.booleans(),
)
def test_assembled_bucket_equals_filtering_and_sorting(counts, reused, order, split):
    """Slicing the previous file gives the table the filter-and-sort reference gives, whatever order the
    previous file holds the articles in, and also when an article's rows lie apart in it."""
    articles = [{"article_id": f"a{i}"} for i in range(len(counts))]
    keep = {a["article_id"] for a, r in zip(articles, reused) if r}
    prev_rows = [r for i in order if i < len(counts) for r in _rows(f"a{i}", counts[i], "old")]
    if split and len(prev_rows) > 2:
        prev_rows = prev_rows[1:] + prev_rows[:1]  # the first article's first row moves to the end
    previous = pa.Table.from_pylist(prev_rows, schema=ROWS)
    fresh = pa.Table.from_pylist([r for a in articles if a["article_id"] not in keep for r in _rows(a["article_id"], 2, "new")], schema=ROWS)
    got = _assemble(articles, keep, previous, fresh)
    assert got.to_pylist() == _assemble_by_sort(articles, keep, previous, fresh).to_pylist()
    by_article = ArticleRows(previous)
    for a in articles:
        assert by_article.get(a["article_id"]) == [r for r in prev_rows if r["article_id"] == a["article_id"]]


def test_a_whole_table_of_the_earlier_parquet_layout_is_read_then_replaced(tmp_path):
    """The wiki's tables were `all.parquet`; they are read as they are and the next write replaces them."""
    import pyarrow.parquet as pq

    wh = Warehouse(tmp_path)
    table = pa.table({"article_id": ["a", "b"], "value": ["x", "y"]})
    (tmp_path / "wiki_pages").mkdir()
    pq.write_table(table, tmp_path / "wiki_pages" / "all.parquet")
    assert wh.read("wiki_pages", schema=SCHEMA).equals(table.cast(SCHEMA))
    wh.write("wiki_pages", table.slice(1))
    assert not (tmp_path / "wiki_pages" / "all.parquet").exists()
    assert wh.read("wiki_pages", schema=SCHEMA).to_pylist() == [{"article_id": "b", "value": "y"}]


def test_a_bucket_file_of_the_earlier_parquet_layout_keeps_its_digest_until_its_step_rewrites_it(tmp_path):
    """Bucket files were `bucket=XX.parquet`: read as they are, their digest is the one the instance recorded
    for them (no rebuild after an upgrade), and the next write replaces them with the Arrow file."""
    import pyarrow.parquet as pq

    wh = Warehouse(tmp_path)
    table = pa.table({"article_id": ["a", "b"], "value": ["x", "y"]})
    (tmp_path / "t").mkdir()
    legacy = tmp_path / "t" / "bucket=00.parquet"
    pq.write_table(table, legacy)
    recorded = wh.files_digest("t", "00")
    assert wh.read("t", "00", SCHEMA).equals(table.cast(SCHEMA))
    assert wh.read("t", "00", columns=["value"]).column_names == ["value"]
    assert wh.files_digest("t", "00") == recorded
    wh.write("t", table.slice(1), "00")
    assert not legacy.exists() and wh.path("t", "00").suffix == ".arrow"
    assert wh.files_digest("t", "00") != recorded
    assert wh.read("t", "00", SCHEMA).to_pylist() == [{"article_id": "b", "value": "y"}]
    assert wh.read("t", "00", columns=["missing"]) is None
