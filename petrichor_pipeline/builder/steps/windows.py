"""The `chunk_windows` step: each chunk's child windows (`text.windows`) with their index texts.

Windows are cut from the article's normalised text at the chunks' offsets, so an article is rebuilt
exactly when its chunks are, or when the windowing rules change. An article with more chunks or windows
than are embedded (`text.limits.MAX_EMBEDDED`) gets a warning saying how much is left to keyword search.
"""

from __future__ import annotations

from typing import Any

from petrichor_core.contract.schemas import SCHEMAS
from petrichor_core.text.index_text import index_text
from petrichor_core.text.limits import MAX_EMBEDDED, embedded_rows
from petrichor_core.text.normalize import normalize_text, sha256_hex
from petrichor_core.text.windows import OVERLAP_CHARS, WINDOW_CHARS, chunk_windows, heading_paths, window_key
from petrichor_core.versions import WINDOW_VERSION
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.incremental import ArticleOutput, BucketResult
from petrichor_pipeline.builder.steps.common import chunks_by_article, run_articles

WINDOWS_KEY = f"windows-v{WINDOW_VERSION}:{WINDOW_CHARS}/{OVERLAP_CHARS}"


def window_rows(art: dict[str, Any], chunk_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The window rows of one article's chunks; a one-window chunk's index text is the chunk's own."""
    text = normalize_text(art["content"])
    paths = heading_paths(text, art["title"])
    rows = []
    for c in chunk_rows:
        for w in chunk_windows(text, c["start"], c["end"], tuple(c["heading_path"] or ()), paths):
            embed_text = index_text(art["title"], w.heading_path, w.content)
            rows.append(
                {
                    "window_id": f"{c['chunk_id']}:{window_key(w.position)}",
                    "chunk_id": c["chunk_id"],
                    "article_id": art["article_id"],
                    "kb_id": art["kb_id"],
                    "tenant": art["tenant"],
                    "position": w.position,
                    "heading_path": list(w.heading_path),
                    "content": w.content,
                    "start": w.start,
                    "end": w.end,
                    "index_text": embed_text,
                    "content_hash": sha256_hex(embed_text),
                }
            )
    return rows


def unembedded_warnings(chunk_rows: list[dict[str, Any]], windows: list[dict[str, Any]]) -> list[str]:
    """What the vector steps leave out of one article (`limits.embedded_rows`), as a warning with how far
    its vectors reach; nothing when all of it is embedded."""
    kept = {"chunk": embedded_rows("chunk", chunk_rows), "window": embedded_rows("window", windows)}
    if len(kept["chunk"]) == len(chunk_rows) and len(kept["window"]) == len(windows):
        return []
    reach = max(r["end"] for rows in kept.values() for r in rows)
    return [
        f"{len(windows) - len(kept['window']):,} of its {len(windows):,} windows and {len(chunk_rows) - len(kept['chunk']):,} "
        f"of its {len(chunk_rows):,} chunks are not embedded (an article's first {MAX_EMBEDDED['window']} windows and "
        f"{MAX_EMBEDDED['chunk']} chunks are): vector search reaches its first {reach:,} characters, keyword search "
        "all of them; split the file to have it all embedded"
    ]


def windows_step(ctx: BuildContext, bucket: str) -> BucketResult:
    chunks = chunks_by_article(ctx, bucket)

    def build(art: dict[str, Any]) -> ArticleOutput:
        chunk_rows = chunks.get(art["article_id"], [])
        windows = window_rows(art, chunk_rows)
        return ArticleOutput(windows, unembedded_warnings(chunk_rows, windows))

    def key(art: dict[str, Any]) -> str:
        return f"{art['article_version']}|{art['source_sha256']}|{ctx.chunk_key}|{WINDOWS_KEY}|{art['tenant']}|{art['kb_id']}"

    return run_articles(ctx, "chunk_windows", bucket, SCHEMAS["chunk_windows"], key, build)
