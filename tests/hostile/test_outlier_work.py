"""Size outliers cost work in proportion to their text: counted (chunks, windows, texts an embedding step
would embed, characters in them), never timed. `benchmarks/outliers.py` gives the seconds."""

from __future__ import annotations

import pytest

from benchmarks.outliers import heading_line, long_line, ten_thousand_headings, ten_thousand_sections
from petrichor_core.contract.schemas import chunk_id_of
from petrichor_core.text.chunking import chunk_markdown
from petrichor_core.text.index_text import index_text
from petrichor_core.text.limits import MAX_HEADING_CHARS
from petrichor_core.text.windows import WINDOW_CHARS
from petrichor_pipeline.builder.steps.windows import window_rows
from petrichor_pipeline.knowledge.page_index import parse_markdown_tree
from petrichor_pipeline.sources.markdown import read_markdown

SHAPES = {
    "long line": lambda scale: long_line(600_000 * scale),
    "heading line": lambda scale: heading_line(600_000 * scale),
    "headings": lambda scale: ten_thousand_headings(5_000 * scale),
    "sections": lambda scale: ten_thousand_sections(5_000 * scale),
}


def _work(markdown: str) -> dict[str, int]:
    """What the chunk, window and embedding steps do with one article, as counts."""
    doc = read_markdown(markdown.encode(), "outlier")
    chunks = [
        {
            "chunk_id": chunk_id_of("a1", c.key),
            "heading_path": list(c.heading_path),
            "start": c.start,
            "end": c.end,
            "index_text": index_text(doc.title, c.heading_path, c.content),
        }
        for c in chunk_markdown(doc.content, doc.title).chunks
    ]
    art = {"article_id": "a1", "kb_id": "kb", "tenant": "t", "title": doc.title, "content": doc.content}
    windows = window_rows(art, chunks)
    texts = {r["index_text"] for r in chunks} | {w["index_text"] for w in windows}
    return {"chars": len(doc.content), "chunks": len(chunks), "windows": len(windows), "texts": len(texts), "embedded_chars": sum(map(len, texts))}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_texts_to_embed_are_bounded_by_the_text_and_grow_linearly(shape: str) -> None:
    small, large = _work(SHAPES[shape](1)), _work(SHAPES[shape](2))
    for work in (small, large):
        # about one chunk per few windows and one window per WINDOW_CHARS of text, nothing per heading
        assert work["texts"] <= 2 * work["chars"] / WINDOW_CHARS + 2, work
        assert work["embedded_chars"] <= 3.5 * work["chars"] + 10_000, work
    assert large["texts"] <= 2.1 * small["texts"] and large["embedded_chars"] <= 2.1 * small["embedded_chars"], (small, large)


def test_ten_thousand_headings_are_not_ten_thousand_chunks() -> None:
    # Headings without text under them merge into chunks: the embedding work follows the characters.
    work = _work(ten_thousand_headings())
    assert work["chunks"] < 200 and work["texts"] < 1_000, work


def test_a_heading_line_makes_a_small_tree_with_capped_titles() -> None:
    nodes = parse_markdown_tree(heading_line(1_000_000), "Heading", "a1")
    assert len(nodes) <= 3
    assert all(len(n.title) <= MAX_HEADING_CHARS + 1 for n in nodes)
