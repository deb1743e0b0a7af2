"""The lexical index of a snapshot: which text each BM25 document is made of, built once at publish.

Both sides use these definitions: the pipeline stores the postings as the snapshot's `lexical_index`
table, and serving loads them instead of tokenising every row again (or rebuilds with another tokenizer).
Row numbers are positions in the snapshot tables, so the postings are only valid for that snapshot.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

from petrichor_pipeline.text.bm25 import BM25Index, from_postings, postings
from petrichor_pipeline.text.tokenize import get_tokenizer

INDEXES = {"chunk": "chunks", "window": "chunk_windows", "question": "questions", "wiki": "wiki_pages", "tree": "tree_nodes"}
"""Lexical index name -> the snapshot table whose rows it indexes."""


def render_path(article_title: str, heading_path: Sequence[str], heading: str = "") -> str:
    """`article › h1 › h2`: blanks and a part equal to the one before it are dropped."""
    parts: list[str] = []
    for part in (article_title, *(heading_path or ((heading,) if heading.strip() else ()))):
        part = part.strip()
        if part and (not parts or parts[-1] != part):
            parts.append(part)
    return " › ".join(parts)


def wiki_extra(page_key: str, aliases: Sequence[str] | None) -> str:
    """The wiki score's "extra" field: the page key and its aliases."""
    return " ".join((page_key, *(aliases or ())))


def documents(name: str, tables: Mapping[str, pa.Table]) -> Iterator[tuple[str, str, str]]:
    """(title, summary, content) per row of the index's table, in table order (weights 3 / 2 / 1)."""
    titles = dict(zip(tables["articles"].column("article_id").to_pylist(), tables["articles"].column("title").to_pylist()))
    if name in ("chunk", "question", "window"):
        ch = tables["chunks"].select(["chunk_id", "article_id", "heading", "heading_path", "index_text"]).to_pylist()
        meta = {}
        for c in ch:
            title = titles.get(c["article_id"], "")
            meta[c["chunk_id"]] = (f"{title} {c['heading']}".strip(), render_path(title, c["heading_path"] or (), c["heading"]))
        if name == "chunk":
            for c in ch:
                yield (*meta[c["chunk_id"]], c["index_text"])
        elif name == "window":  # a snapshot from before child windows has none
            w = tables.get("chunk_windows")
            pairs = zip(w.column("chunk_id").to_pylist(), w.column("index_text").to_pylist()) if w is not None else ()
            for chunk_id, text in pairs:
                yield (*meta.get(chunk_id, ("", "")), text)
        else:
            q = tables["questions"]
            for chunk_id, text in zip(q.column("chunk_id").to_pylist(), q.column("index_text").to_pylist()):
                yield (*meta.get(chunk_id, ("", "")), text)
    elif name == "wiki":
        w = tables["wiki_pages"].select(["page_key", "title", "summary", "content_md", "aliases"]).to_pylist()
        for p in w:
            yield p["title"], p["summary"] or "", f"{p['content_md']}\n{wiki_extra(p['page_key'], p['aliases'])}"
    elif name == "tree":
        t = tables["tree_nodes"].select(["title", "summary", "content"]).to_pylist()
        for n in t:
            yield n["title"], n["summary"] or "", n["content"]
    else:
        raise KeyError(name)


def build_indexes(tables: Mapping[str, pa.Table], tokenizer: str = "bigram") -> dict[str, BM25Index]:
    tok = get_tokenizer(tokenizer)
    return {name: BM25Index.build(documents(name, tables), tok.index) for name in INDEXES}


def to_table(indexes: Mapping[str, BM25Index]) -> pa.Table:
    """One row per (index, term): the term's ascending row numbers and weighted counts."""
    names, terms, rows, weights = [], [], [], []
    for name, index in indexes.items():
        t, r, w = postings(index)
        names += [name] * len(t)
        terms += t
        rows += r
        weights += w
    return pa.table(
        {
            "index": pa.array(names, pa.string()),
            "term": pa.array(terms, pa.string()),
            "rows": pa.array(rows, pa.list_(pa.int32())),
            "weights": pa.array(weights, pa.list_(pa.float32())),
        }
    )


def from_table(table: pa.Table, sizes: Mapping[str, int]) -> dict[str, BM25Index]:
    """The indexes back from a `lexical_index` table; `sizes` are the row counts of the indexed tables."""
    out: dict[str, BM25Index] = {}
    names = np.asarray(table.column("index").to_pylist(), dtype=object)
    for name in INDEXES:
        part = table.filter(pa.array(names == name))
        rows_col, weights_col = part.column("rows").combine_chunks(), part.column("weights").combine_chunks()
        offsets = rows_col.offsets.to_numpy()
        offsets = offsets - offsets[0]
        flat_rows = rows_col.flatten().to_numpy(zero_copy_only=False)
        flat_weights = weights_col.flatten().to_numpy(zero_copy_only=False)
        rows = [flat_rows[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
        weights = [flat_weights[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
        out[name] = from_postings(part.column("term").to_pylist(), rows, weights, sizes[name])
    return out
