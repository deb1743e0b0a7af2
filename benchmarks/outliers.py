"""Seconds and work per build step for one size outlier, run through the offline pipeline pieces.

The outliers are files under the 5 MiB limit whose shape, not size, made a build slow: one 5,000,003-byte
line, one 2 MB heading line, and 10,000 headings in about 174 KB. Each is pushed through what the build
does with one article (read, chunks, windows, page index, questions and wiki candidates with the offline
model, the lexical index) and the texts the embedding steps would embed are counted, not embedded (the
local embedder manages about 1.4 long passages a second, so that count is what decides the embedding time).

    .venv/bin/python benchmarks/outliers.py [--only NAME] [--profile NAME]

`--profile NAME` prints the 25 costliest functions of that outlier under cProfile.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from petrichor_core.config import load_settings
from petrichor_core.contract.schemas import chunk_id_of
from petrichor_core.models.protocols import CallContext
from petrichor_core.models.providers import make_chat_model
from petrichor_core.text import lexical
from petrichor_core.text.bm25 import BM25Index
from petrichor_core.text.chunking import chunk_markdown
from petrichor_core.text.index_text import index_text
from petrichor_core.text.normalize import sha256_hex
from petrichor_core.text.tokenize import get_tokenizer
from petrichor_pipeline.builder.steps.common import ChunkView
from petrichor_pipeline.builder.steps.windows import window_rows
from petrichor_pipeline.knowledge.page_index import build_page_index
from petrichor_pipeline.knowledge.questions import generate_questions
from petrichor_pipeline.knowledge.wiki import ArticleInput, build_article_knowledge
from petrichor_pipeline.sources.markdown import read_markdown


def _words(prefix: str, size: int) -> str:
    """`size` characters of distinct words, so that no two chunks or windows share a text (and a vector)."""
    return " ".join(f"{prefix}{i}" for i in range(size // (len(prefix) + 4) + 1))[:size]


def long_line(size: int = 5_000_003) -> str:
    return "# Line\n\n" + _words("wave", size - 9) + "\n"


def heading_line(size: int = 2_000_000) -> str:
    return "# " + _words("tide", size - 31) + "\n\nThe body under the heading.\n"


def ten_thousand_headings(count: int = 10_000) -> str:
    """Headings nested five deep and nothing else: about 174 KB."""
    return "# Headings\n\n" + "".join(f"{'#' * (i % 5 + 2)} section {i}\n" for i in range(count))


def ten_thousand_sections(count: int = 10_000) -> str:
    """The same headings, each with a short line under it: about 290 KB."""
    return "# Headings\n\n" + "".join(f"{'#' * (i % 5 + 2)} section {i}\n\nnote {i}\n" for i in range(count))


OUTLIERS: dict[str, Callable[[], str]] = {
    "long-line-5MB": long_line,
    "heading-2MB": heading_line,
    "headings-10k": ten_thousand_headings,
    "sections-10k": ten_thousand_sections,
}


@dataclass
class Run:
    name: str
    size: int
    seconds: dict[str, float] = field(default_factory=dict)
    work: dict[str, int] = field(default_factory=dict)


def measure(name: str, markdown: str) -> Run:
    run = Run(name, len(markdown.encode()))
    model = make_chat_model(load_settings())
    call = CallContext(article_id="a1", kb_id="kb", guide="")

    def step(label: str, fn: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        out = fn()
        run.seconds[label] = time.perf_counter() - started
        return out

    doc = step("read", lambda: read_markdown(markdown.encode(), name))
    art = {"article_id": "a1", "kb_id": "kb", "tenant": "default", "title": doc.title, "content": doc.content}
    result = step("chunks", lambda: chunk_markdown(doc.content, doc.title))

    def chunk_rows() -> list[dict[str, Any]]:
        return [
            {
                "chunk_id": chunk_id_of("a1", c.key),
                "article_id": "a1",
                "key": c.key,
                "position": c.position,
                "heading": c.heading,
                "heading_path": list(c.heading_path),
                "content": c.content,
                "start": c.start,
                "end": c.end,
                "index_text": index_text(doc.title, c.heading_path, c.content),
            }
            for c in result.chunks
        ]

    chunks = step("index texts", chunk_rows)
    windows = step("windows", lambda: window_rows(art, chunks))
    views = [ChunkView(r) for r in chunks]
    tree = step("page index", lambda: build_page_index(doc.content, doc.title, model, call, article_id="a1", kb_id="kb", tenant="default"))
    questions = step("questions", lambda: generate_questions(views, model, call))
    step(
        "wiki candidates",
        lambda: build_article_knowledge(
            ArticleInput(article_id="a1", kb_id="kb", tenant="default", title=doc.title, content=doc.content, article_version="v", kb_name="kb"),
            views,
            model,
            call,
            questions=questions.questions,
        ),
    )
    question_rows = [
        {"chunk_id": r["chunk_id"], "index_text": index_text(doc.title, r["heading_path"], q)}
        for r in chunks
        for q in questions.questions.get(r["key"], ())
    ]
    tables = {
        "articles": pa.table({"article_id": ["a1"], "title": [doc.title]}),
        "chunks": pa.Table.from_pylist(chunks),
        "chunk_windows": pa.Table.from_pylist(windows) if windows else pa.table({"chunk_id": [], "index_text": []}),
        "questions": pa.Table.from_pylist(question_rows) if question_rows else pa.table({"chunk_id": [], "index_text": []}),
        "tree_nodes": pa.Table.from_pylist(list(tree.rows)).select(["title", "summary", "content"]),
    }
    tok = get_tokenizer(load_settings().lexical_tokenizer)
    step("lexical", lambda: {n: BM25Index.build(lexical.documents(n, tables), tok.index) for n in ("chunk", "window", "question", "tree")})
    embedded = {sha256_hex(r["index_text"]) for r in chunks} | {sha256_hex(w["index_text"]) for w in windows}
    run.work = {
        "chunks": len(chunks),
        "windows": len(windows),
        "tree nodes": len(tree.rows),
        "questions": len(question_rows),
        "texts to embed": len(embedded),
        "chars to embed": sum(len(r["index_text"]) for r in chunks) + sum(len(w["index_text"]) for w in windows),
    }
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(OUTLIERS))
    parser.add_argument("--profile", choices=sorted(OUTLIERS))
    args = parser.parse_args()
    if args.profile:
        text = OUTLIERS[args.profile]()
        profiler = cProfile.Profile()
        profiler.runcall(measure, args.profile, text)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        return
    for name in [args.only] if args.only else OUTLIERS:
        run = measure(name, OUTLIERS[name]())
        total = sum(run.seconds.values())
        print(f"{name}: {run.size:,} bytes, {total:.2f} s")
        print("  seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in run.seconds.items()))
        print("  work: " + ", ".join(f"{k} {v:,}" for k, v in run.work.items()))


if __name__ == "__main__":
    main()
