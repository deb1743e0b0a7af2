"""The lexical index of a snapshot: which text each BM25 document is made of, built once at publish.

Both sides use these definitions: the pipeline stores the postings as the snapshot's `lexical_index`
table, and serving loads them instead of tokenising every row again (or rebuilds with another tokenizer).
Row numbers are positions in the snapshot tables, so the postings are only valid for that snapshot.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petrichor_core.text.bm25 import BM25Index, from_csc, postings
from petrichor_core.text.tokenize import get_tokenizer

INDEXES = {"chunk": "chunks", "window": "chunk_windows", "question": "questions", "wiki": "wiki_pages", "tree": "tree_nodes"}
"""Lexical index name -> the snapshot table whose rows it indexes."""


def sizes(tables: Mapping[str, pa.Table]) -> dict[str, int]:
    """Each index's document count: the row count of the table it indexes."""
    return {name: tables[table].num_rows for name, table in INDEXES.items()}


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


WIKI_COLUMNS = ("page_key", "title", "summary", "content_md", "aliases")
"""The `wiki_pages` columns a page's document is made of (`documents`)."""


def documents(name: str, tables: Mapping[str, pa.Table]) -> Iterator[tuple[str, str, str]]:
    """(title, summary, content) per row of the index's table, in table order (weights 3 / 2 / 1)."""
    if name in ("chunk", "question", "window"):
        titles = dict(zip(tables["articles"].column("article_id").to_pylist(), tables["articles"].column("title").to_pylist()))
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
        w = tables["wiki_pages"].select(list(WIKI_COLUMNS)).to_pylist()
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
    return postings_table({name: postings(index) for name, index in indexes.items()})


def postings_table(by_index: Mapping[str, tuple[list, list, list]]) -> pa.Table:
    """The lexical_index table from (terms, rows, weights) per index name, in the given order."""
    names, terms, rows, weights = [], [], [], []
    for name, (t, r, w) in by_index.items():
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


def from_table(table: pa.Table, sizes: Mapping[str, int], lengths: pa.Table | None = None) -> dict[str, BM25Index]:
    """The indexes back from a `lexical_index` table; `sizes` are the row counts of the indexed tables.

    `to_table` writes each index's terms as one run, so every index is a slice of the table's flattened
    postings: numpy views of its Arrow buffers, never a Python object per term or posting (a table whose
    runs are interleaved is regrouped first). With `lengths` (`lengths_table`), the document lengths are
    read from it instead of summed over every posting, so postings mapped from a file stay unread until a
    query scores their term.
    """
    names = table.column("index").combine_chunks()
    starts = {}
    for name in INDEXES:
        found = pc.indices_nonzero(pc.equal(names, name)).to_numpy()
        if len(found) and found[-1] - found[0] + 1 != len(found):
            return from_table(pa.concat_tables(table.filter(pc.equal(names, n)) for n in INDEXES), sizes, lengths)
        starts[name] = (int(found[0]), int(found[-1]) + 1) if len(found) else (0, 0)
    stored = (
        {} if lengths is None else dict(zip(lengths.column("index").to_pylist(), lengths.column("lengths").chunks[0] if lengths.num_rows else ()))
    )
    rows_col, weights_col = _one_chunk(table.column("rows")), _one_chunk(table.column("weights"))
    offsets = rows_col.offsets.to_numpy()
    flat_rows = _values(rows_col)
    flat_weights = _values(weights_col)
    terms = table.column("term")
    out: dict[str, BM25Index] = {}
    for name, (lo, hi) in starts.items():
        base = offsets[lo] - offsets[0]
        indptr = offsets[lo : hi + 1] - offsets[lo]
        end = base + (indptr[-1] if len(indptr) else 0)
        known = stored.get(name)
        out[name] = from_csc(
            terms.slice(lo, hi - lo).to_pylist(),
            indptr if len(indptr) else np.zeros(1, np.int64),
            flat_rows[base:end],
            flat_weights[base:end],
            sizes[name],
            lengths=None if known is None else known.values.to_numpy(),
        )
    return out


def lengths_table(indexes: Mapping[str, BM25Index]) -> pa.Table:
    """Each index's weighted document lengths, one row per index: what `from_table` reads beside mapped postings."""
    return pa.table(
        {
            "index": pa.array(list(indexes), pa.string()),
            "lengths": pa.array([ix.lengths for ix in indexes.values()], pa.list_(pa.float64())),
        }
    )


def _one_chunk(column: pa.ChunkedArray) -> pa.Array:
    """The column as one array: zero-copy when it is one chunk already (a mapped file's single batch)."""
    return column.chunks[0] if column.num_chunks == 1 else column.combine_chunks()


def _values(lists: pa.Array) -> np.ndarray:
    """The list array's values from its first offset on, as a numpy view of the Arrow buffer (no copy)."""
    first = int(lists.offsets[0].as_py()) if len(lists) else 0
    return lists.values.slice(first).to_numpy(zero_copy_only=False)
