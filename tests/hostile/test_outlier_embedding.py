"""One outsized file never holds a build back: of each article only the first chunks and windows are
embedded (`text.limits.MAX_EMBEDDED`), the rest of its text stays searchable by keywords, the windows step
warns naming the file, and every other article is embedded whole. Counted, never timed."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from benchmarks.outliers import heading_line, long_line
from petrichor_core.config import BUCKETS, Settings
from petrichor_core.text.chunking import chunk_markdown
from petrichor_core.text.index_text import index_text
from petrichor_core.text.limits import MAX_EMBEDDED, embedded_rows
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.steps.articles import articles_step
from petrichor_pipeline.builder.steps.chunks import chunks_step
from petrichor_pipeline.builder.steps.windows import window_rows, windows_step
from petrichor_pipeline.builder.vectors import vectors_step
from petrichor_pipeline.sources.markdown import read_markdown
from tests.pipeline.test_embedded_tables import CountingEmbedder

SHAPES = {"long line": long_line, "heading line": heading_line}
"""The two outliers that held a build for an hour: one line without a break, and one 2 MB heading line."""


def _rows(markdown: str) -> dict[str, list[dict[str, Any]]]:
    """The chunk and window rows the chunk and window steps make of one article."""
    doc = read_markdown(markdown.encode(), "outlier")
    chunks = [
        {
            "article_id": "a1",
            "chunk_id": f"a1:{c.key}",
            "heading_path": list(c.heading_path),
            "start": c.start,
            "end": c.end,
            "index_text": index_text(doc.title, c.heading_path, c.content),
        }
        for c in chunk_markdown(doc.content, doc.title).chunks
    ]
    art = {"article_id": "a1", "kb_id": "kb", "tenant": "t", "title": doc.title, "content": doc.content}
    return {"chunk": chunks, "window": window_rows(art, chunks)}


def test_each_articles_first_rows_in_text_order_are_embedded() -> None:
    limit = MAX_EMBEDDED["window"]
    rows = [{"article_id": "big", "start": s} for s in range(2 * limit, -1, -1)] + [{"article_id": "small", "start": 5}]
    kept = embedded_rows("window", rows)
    assert sorted(r["start"] for r in kept if r["article_id"] == "big") == list(range(limit))
    assert kept[0]["start"] == limit - 1 and kept[-1] == rows[-1]  # the given order is kept
    assert embedded_rows("question", rows) == rows  # questions are not capped


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_outsized_file_adds_the_same_texts_to_embed_whatever_its_size(shape: str) -> None:
    texts = []
    for size in (400_000, 2_000_000):
        rows = _rows(SHAPES[shape](size))
        assert all(len(rows[kind]) > MAX_EMBEDDED[kind] for kind in MAX_EMBEDDED), size
        texts.append({r["index_text"] for kind in MAX_EMBEDDED for r in embedded_rows(kind, rows[kind])})
    assert texts[0] == texts[1] and len(texts[0]) <= sum(MAX_EMBEDDED.values())


def test_a_long_structured_guide_keeps_every_vector() -> None:
    """The caps are for outliers: a 150 KB guide of sections and paragraphs (as large as the largest product guide of
    the evaluation sets) is embedded whole."""
    paragraph = "The service reads its settings at start-up and applies them to every request it serves. " * 6
    sections = [f"## Section {i}\n\n" + "\n\n".join(f"{paragraph} (part {j})" for j in range(4)) for i in range(70)]
    rows = _rows("# Guide\n\n" + "\n\n".join(sections))
    assert sum(len(c["index_text"]) for c in rows["chunk"]) > 150_000
    for kind in MAX_EMBEDDED:
        assert embedded_rows(kind, rows[kind]) == rows[kind], kind


def _by_article(ctx: BuildContext, asset: str) -> dict[str, int]:
    tables = [t for b in BUCKETS if (t := ctx.warehouse.read(asset, b)) is not None]
    ids = pa.concat_tables(tables).column("article_id").to_pylist()
    return {aid: ids.count(aid) for aid in set(ids)}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_build_embeds_the_outsized_files_first_rows_and_every_other_article_whole(shape: str, tmp_path) -> None:
    kb = tmp_path / "corpus" / "kb"
    kb.mkdir(parents=True)
    (kb / "outsized.md").write_text(SHAPES[shape](400_000), encoding="utf-8")
    for i in range(3):
        (kb / f"note-{i}.md").write_text(f"# Note {i}\n\n" + f"Tide table {i} says the water rises. " * 60, encoding="utf-8")
    ctx = BuildContext(Settings(data_dir=tmp_path / "data", corpus_dir=tmp_path / "corpus", embed_cache=tmp_path / "cache"))
    ctx._embedder = embedder = CountingEmbedder()
    warnings = []
    for bucket in BUCKETS:
        articles_step(ctx, bucket)
        chunks_step(ctx, bucket)
        warnings += windows_step(ctx, bucket).warnings
        for kind in MAX_EMBEDDED:
            result = vectors_step(ctx, bucket, kind)
            assert result.extra["pending"] == 0 and not result.warnings, result.warnings

    outsized = next(a.article_id for a in ctx.scan().articles if a.path == "kb/outsized.md")
    others = 0
    for kind, (source, vectors) in {"chunk": ("chunks", "chunk_vectors"), "window": ("chunk_windows", "window_vectors")}.items():
        rows, embedded = _by_article(ctx, source), _by_article(ctx, vectors)
        assert rows[outsized] > MAX_EMBEDDED[kind] and embedded.pop(outsized) == MAX_EMBEDDED[kind]
        assert embedded == {aid: n for aid, n in rows.items() if aid != outsized}  # the other articles whole
        others += sum(embedded.values())
    assert len(embedder.texts) <= sum(MAX_EMBEDDED.values()) + others
    [warning] = [w for w in warnings if "not embedded" in w.message]
    assert warning.path == "kb/outsized.md" and "keyword search all of them" in warning.message


def test_the_questions_step_asks_only_about_the_outsized_files_embedded_chunks(tmp_path) -> None:
    """With a model configured every question is a model call and a question vector: one outsized file costs
    at most `MAX_EMBEDDED["chunk"]` chunks' worth, and the step says what it left out."""
    from petrichor_pipeline.builder.steps.questions import questions_step

    kb = tmp_path / "corpus" / "kb"
    kb.mkdir(parents=True)
    (kb / "outsized.md").write_text(long_line(400_000), encoding="utf-8")
    (kb / "note.md").write_text("# Note\n\n" + "Tide table says the water rises. " * 60, encoding="utf-8")
    ctx = BuildContext(Settings(data_dir=tmp_path / "data", corpus_dir=tmp_path / "corpus", embed_cache=tmp_path / "cache"))
    warnings = []
    for bucket in BUCKETS:
        articles_step(ctx, bucket)
        chunks_step(ctx, bucket)
        warnings += questions_step(ctx, bucket).warnings
    outsized = next(a.article_id for a in ctx.scan().articles if a.path == "kb/outsized.md")
    asked: dict[str, set[str]] = {}
    for bucket in BUCKETS:
        table = ctx.warehouse.read("questions", bucket)
        for row in table.to_pylist() if table is not None else []:
            asked.setdefault(row["article_id"], set()).add(row["chunk_id"])
    chunks = _by_article(ctx, "chunks")
    assert chunks[outsized] > MAX_EMBEDDED["chunk"] and len(asked[outsized]) == MAX_EMBEDDED["chunk"]
    assert all(len(asked[aid]) == n for aid, n in chunks.items() if aid != outsized)
    [warning] = [w for w in warnings if "no generated questions" in w.message]
    assert warning.path == "kb/outsized.md"
