"""The snapshot's lexical index assembled from per-article postings, so a publish re-tokenises only the
articles that were rebuilt (and the cross-article wiki, which every build recomputes).

Every row of the chunk, window, question and tree indexes belongs to one article, and a bucket's tables
keep each article's rows together. An article's postings (row numbers local to its rows of each index) are
cached per bucket in the warehouse (`lexical_parts/bucket=XX.arrow`, one row per article, index and term)
beside a signature per article of what they were computed from: its title, the build keys of the indexed
steps and its row counts. Merging the articles in snapshot order, each article's rows shifted by the rows
before it, gives exactly the index a build over the whole snapshot gives: a term's id is its rank in code
point order (as in `BM25Index`), and a stable sort by term keeps rows ascending inside each term.

Wiki pages are keyed by their text's hash instead. A page whose text changed since the last publish (a hub
page whose sources gained a sentence) gets its previous text's cached counts with only its changed lines
tokenised (`tokenize.line_pieces`): a hub page is megabytes of which a build changes a few lines.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petrichor_core.text import lexical
from petrichor_core.text.bm25 import FIELD_WEIGHTS, BM25Index, row_sums, weighted_counts
from petrichor_core.text.tokenize import changed_line_pieces, get_tokenizer
from petrichor_core.versions import LEXICAL_PARTS_VERSION
from petrichor_pipeline.builder.warehouse import CACHE_OPTIONS, Warehouse

BUCKET_INDEXES = tuple(name for name in lexical.INDEXES if name != "wiki")
"""The indexes whose rows belong to one article each; the wiki index spans buckets and is rebuilt whole."""
SIGNED_ASSETS = ("chunks", "chunk_windows", "questions", "page_index")
"""The warehouse steps whose rows the article indexes read (besides the article's title)."""
PARTS_SCHEMA = pa.schema(
    [
        ("article_id", pa.string()),
        ("index", pa.string()),
        ("term", pa.string()),
        ("rows", pa.list_(pa.int32())),
        ("weights", pa.list_(pa.float32())),
    ]
)


SPANS_KEY = "petrichor.spans"
"""A cache file's metadata key for where its units' rows lie, so reuse slices the file without hashing its keys:
a bucket's `[[article_id, index, start, end], ...]`, the wiki's `{page text hash: [start, end]}`."""

MERGED_COLUMNS = ("term", "rows", "weights")
"""The columns of `PARTS_SCHEMA` the merge reads. A unit keeps only these: the article id and index name
repeated on every cached row are 44 % of a bucket cache's memory (100,000 chunks: 750 of 1,719 MB), which a
publish would otherwise hold for every bucket until the merge ends."""


@dataclass(frozen=True)
class Unit:
    """A run of consecutive rows of one index in the snapshot and their postings (`MERGED_COLUMNS` of
    `PARTS_SCHEMA` rows, row numbers local to the run); `start` is the run's first row within its bucket's
    slice of the table."""

    start: int
    postings: pa.Table


@dataclass
class BucketParts:
    """One bucket's postings per index, as units in row order, and the row count of each index."""

    units: dict[str, list[Unit]]
    sizes: dict[str, int]
    reused: int
    tokenised: int


def _codes(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """A string column as integer codes and the strings they stand for (no Python object per row)."""
    encoded = pc.dictionary_encode(column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column)
    return encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary.to_pylist()


def _boundaries(*codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the runs of rows whose codes are all equal to the row before."""
    n = len(codes[0])
    change = np.zeros(max(n - 1, 0), dtype=bool)
    for c in codes:
        change |= c[1:] != c[:-1]
    cuts = np.flatnonzero(change) + 1
    return np.concatenate([[0], cuts]).astype(np.int64), np.concatenate([cuts, [n]]).astype(np.int64)


def _runs(article_ids: pa.ChunkedArray | pa.Array) -> list[tuple[str, int, int]]:
    """(article_id, first row, row count) of each run of equal consecutive ids."""
    if not len(article_ids):
        return []
    codes, names = _codes(article_ids)
    starts, ends = _boundaries(codes)
    return [(names[codes[s]], int(s), int(e - s)) for s, e in zip(starts, ends)]


def _signatures(wh: Warehouse, bucket: str, tables: Mapping[str, pa.Table], tokenizer: str, runs: Mapping[str, list]) -> dict[str, str]:
    """Per article of the bucket: what its postings are computed from."""
    keys = {asset: (wh.read_json(asset, bucket) or {}).get("keys") or {} for asset in SIGNED_ASSETS}
    counts: dict[str, dict[str, int]] = {}
    for name, article_runs in runs.items():
        for aid, _, n in article_runs:
            counts.setdefault(aid, {})[name] = counts.get(aid, {}).get(name, 0) + n
    arts = tables["articles"]
    out = {}
    for aid, title in zip(arts.column("article_id").to_pylist(), arts.column("title").to_pylist()):
        parts = [LEXICAL_PARTS_VERSION, get_tokenizer(tokenizer).key, aid, title, json.dumps(counts.get(aid, {}), sort_keys=True)]
        parts += [f"{asset}:{keys[asset].get(aid)}" for asset in SIGNED_ASSETS]
        out[aid] = hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:24]
    return out


def _cached(wh: Warehouse, bucket: str) -> tuple[pa.Table, dict[str, str]]:
    """The bucket's cached postings table and the signature of each article in it (empty when unreadable)."""
    table, sidecar = _cache_file(wh, bucket)
    return table, dict(sidecar.get("articles") or {})


def _cache_file(wh: Warehouse, name: str) -> tuple[pa.Table, dict]:
    """A postings cache (`PARTS_SCHEMA`, its file's metadata kept) and its sidecar; empty when either is
    missing, unreadable or of another version."""
    sidecar = wh.read_json("lexical_parts", name) or {}
    table = wh.read_arrow("lexical_parts", f"bucket={name}") if sidecar.get("version") == LEXICAL_PARTS_VERSION else None
    if table is None:
        return PARTS_SCHEMA.empty_table(), {}
    try:
        return table.select(PARTS_SCHEMA.names).cast(PARTS_SCHEMA.with_metadata(table.schema.metadata)), sidecar
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return PARTS_SCHEMA.empty_table(), {}


def _slices(table: pa.Table) -> dict[tuple[str, str], pa.Table]:
    """The cached table cut into its (article_id, index) runs, by the spans its file records (`_with_spans`),
    else found from its rows (a cache written before they were recorded)."""
    if not table.num_rows:
        return {}
    try:
        stored = json.loads((table.schema.metadata or {}).get(SPANS_KEY.encode(), b"[]"))
    except ValueError:
        stored = []
    if stored and stored[-1][3] == table.num_rows:
        return {(aid, name): table.slice(st, en - st) for aid, name, st, en in stored}
    aids, aid_names = _codes(table.column("article_id"))
    idx, idx_names = _codes(table.column("index"))
    starts, ends = _boundaries(aids, idx)
    return {(aid_names[aids[s]], idx_names[idx[s]]): table.slice(int(s), int(e - s)) for s, e in zip(starts, ends)}


def _with_spans(pieces: Sequence[tuple[str, str, pa.Table]]) -> pa.Table:
    """The cache table of (article id, index, postings) pieces, its metadata recording each piece's rows."""
    spans, pos = [], 0
    for aid, name, part in pieces:
        spans.append((aid, name, pos, pos + part.num_rows))
        pos += part.num_rows
    table = pa.concat_tables([part for _, _, part in pieces])
    return table.replace_schema_metadata({SPANS_KEY: json.dumps(spans, separators=(",", ":"))})


def _postings_rows(name: str, units: Sequence[tuple[str, BM25Index]]) -> pa.Table:
    """`PARTS_SCHEMA` rows of many units' indexes in one table: per unit its terms in id order."""
    keys, terms, counts = [], [], []
    indptrs, rows, weights, base = [np.zeros(1, np.int64)], [], [], 0
    for key, index in units:
        vocab = [""] * len(index.vocab)
        for term, t in index.vocab.items():
            vocab[t] = term
        terms += vocab
        counts.append(len(vocab))
        keys.append(key)
        indptrs.append(index.indptr[1:] + base)
        base += int(index.indptr[-1])
        rows.append(index.indices)
        weights.append(index.data)
    offsets = pa.array(np.concatenate(indptrs).astype(np.int32))
    flat_rows = np.concatenate(rows).astype(np.int32) if rows else np.empty(0, np.int32)
    flat_weights = np.concatenate(weights).astype(np.float32) if weights else np.empty(0, np.float32)
    return pa.table(
        {
            "article_id": pa.array(np.repeat(np.asarray(keys, dtype=object), counts) if keys else [], pa.string()),
            "index": pa.array([name] * len(terms), pa.string()),
            "term": pa.array(terms, pa.string()),
            "rows": pa.ListArray.from_arrays(offsets, pa.array(flat_rows)),
            "weights": pa.ListArray.from_arrays(offsets, pa.array(flat_weights)),
        },
        schema=PARTS_SCHEMA,
    )


def bucket_parts(wh: Warehouse, bucket: str, tables: Mapping[str, pa.Table], tokenizer: str) -> BucketParts:
    """The bucket's postings per index: cached articles whose signature matches are reused, the others are
    tokenised (only their rows), and the cache is rewritten when anything changed."""
    runs = {name: _runs(tables[lexical.INDEXES[name]].column("article_id")) for name in BUCKET_INDEXES}
    sizes = {name: tables[lexical.INDEXES[name]].num_rows for name in BUCKET_INDEXES}
    regular = {name: len({aid for aid, _, _ in r}) == len(r) for name, r in runs.items()}
    signatures = _signatures(wh, bucket, tables, tokenizer, runs)
    cached_table, cached_sigs = _cached(wh, bucket)
    reuse = {aid for aid, sig in signatures.items() if cached_sigs.get(aid) == sig}
    cached = _slices(cached_table) if reuse else {}
    todo = [aid for aid in signatures if aid not in reuse]

    fresh: dict[tuple[str, str], pa.Table] = {}
    whole: dict[str, pa.Table] = {}
    tok = get_tokenizer(tokenizer) if todo or not all(regular.values()) else None
    if todo:
        wanted = pa.array(todo, pa.string())
        sub = {name: t.filter(pc.is_in(t.column("article_id"), value_set=wanted)) if t.num_rows else t for name, t in tables.items()}
        for name in BUCKET_INDEXES:
            if not regular[name]:
                continue
            docs = list(lexical.documents(name, sub))
            assert tok is not None  # made above whenever there are articles to index
            for aid, start, n in _runs(sub[lexical.INDEXES[name]].column("article_id")):
                fresh[(aid, name)] = _postings_rows(name, [(aid, BM25Index.build(docs[start : start + n], tok.index))])
    for name in BUCKET_INDEXES:
        if not regular[name]:  # an article's rows apart: this index of the bucket is tokenised as one run
            assert tok is not None  # made above whenever an index is not regular
            whole[name] = _postings_rows(name, [("", BM25Index.build(lexical.documents(name, tables), tok.index))])

    units: dict[str, list[Unit]] = {}
    pieces: list[tuple[str, str, pa.Table]] = []
    empty = PARTS_SCHEMA.empty_table()
    for name in BUCKET_INDEXES:
        if name in whole:
            units[name] = [Unit(0, whole[name].select(MERGED_COLUMNS))] if sizes[name] else []
            continue
        units[name] = []
        for aid, start, _ in runs[name]:
            part = fresh.get((aid, name)) if aid not in reuse else cached.get((aid, name), empty)
            units[name].append(Unit(start, (part if part is not None else empty).select(MERGED_COLUMNS)))
    for aid in signatures:  # the cache in article order, each article's indexes together
        for name in BUCKET_INDEXES:
            part = cached.get((aid, name)) if aid in reuse else fresh.get((aid, name))
            if part is not None and part.num_rows:
                pieces.append((aid, name, part))
    if todo or set(cached_sigs) != set(signatures):
        wh.write_arrow("lexical_parts", f"bucket={bucket}", _with_spans(pieces) if pieces else empty, CACHE_OPTIONS)
        wh.write_json("lexical_parts", bucket, {"version": LEXICAL_PARTS_VERSION, "articles": signatures})
    return BucketParts(units, sizes, reused=len(reuse), tokenised=len(todo))


WIKI_PARTS = "wiki"
"""The cache of wiki postings (`lexical_parts/bucket=wiki.arrow`): one unit per distinct page text, keyed
by its hash, so a build re-tokenises only the pages whose title, summary, content or aliases changed."""


def wiki_units(
    wh: Warehouse,
    tables: Mapping[str, pa.Table],
    tokenizer: str,
    previous: Callable[[set[str]], pa.Table | None] = lambda keys: None,
    save: Callable[[Callable[[], None]], object] = lambda write: write(),
) -> tuple[pa.Table, np.ndarray]:
    """The wiki index's postings, one page per unit in row order: (postings rows, each row's page number).

    The cache keeps each page text's rows together and its metadata their spans, so reused pages are sliced
    from it: no encoding of its keys, no take over its rows. `previous(keys)` gives the earlier rows of those
    pages (those the wiki step replaced, or None): a page whose earlier text is cached is counted from it
    (`_edited_counts`). The rewritten cache is handed to `save` (written at once by default): only the next
    build reads it, so `wiki_index` writes it beside the merge (5 million rows at 10,000 articles: 0.3–1.2 s)."""
    pages_table = tables["wiki_pages"]
    key = get_tokenizer(tokenizer).key
    hashes = _page_hashes(key, pages_table)
    cached_table, spans = _cached_wiki(wh)
    new_rows = [i for i, h in enumerate(hashes) if h not in spans]  # only these pages' texts become Python strings
    new_pages = pages_table.take(pa.array(new_rows, pa.int64()))
    docs = lexical.documents("wiki", {"wiki_pages": new_pages})
    todo = {hashes[i]: (page, doc) for i, page, doc in zip(new_rows, new_pages.column("page_key").to_pylist(), docs)}
    pages = list(dict.fromkeys(hashes))
    if todo or len(spans) != len(pages):  # the cache becomes this wiki's pages, in its order
        tok = get_tokenizer(tokenizer)
        earlier = _earlier_counts(cached_table, spans, key, previous({page for page, _ in todo.values()}) if todo and spans else None)
        counts = []
        for h, (page, doc) in todo.items():
            edited = _edited_counts(*earlier[page], doc, tok.index) if page in earlier else None
            counts.append((h, edited if edited is not None else weighted_counts(doc, tok.index)))
        fresh = _postings_rows("wiki", [(h, BM25Index.from_counts([c])) for h, c in counts])
        n = cached_table.num_rows
        spans.update({h: (n + st, n + en) for h, (st, en) in _spans(fresh.column("article_id")).items()})
        cached_table = _gathered(pa.concat_tables([cached_table, fresh]), [spans[h] for h in pages])
        pos, kept = 0, {}
        for h in pages:
            st, en = spans[h]
            kept[h], pos = (pos, pos + en - st), pos + en - st
        spans = kept
        stored = cached_table.replace_schema_metadata({SPANS_KEY: json.dumps(spans, separators=(",", ":"))})

        def write() -> None:
            wh.write_arrow("lexical_parts", f"bucket={WIKI_PARTS}", stored, CACHE_OPTIONS)
            wh.write_json("lexical_parts", WIKI_PARTS, {"version": LEXICAL_PARTS_VERSION})

        save(write)
    picked = [spans[h] for h in hashes]
    lengths = np.asarray([en - st for st, en in picked], dtype=np.int64)
    return _gathered(cached_table, picked), np.repeat(np.arange(len(picked)), lengths)


def _page_hash(tokenizer_key: str, doc: Sequence[str]) -> str:
    return hashlib.sha256("\x1f".join((LEXICAL_PARTS_VERSION, tokenizer_key, *doc)).encode()).hexdigest()[:24]


def _page_hashes(tokenizer_key: str, pages: pa.Table) -> list[str]:
    """`_page_hash` of each page's document (`lexical.documents`), hashed from the table's UTF-8 buffers:
    the pages' texts (248 MB at 10,000 articles) never become Python strings, only the few fields around them."""
    pages = pages.select(list(lexical.WIKI_COLUMNS)).combine_chunks()
    start = hashlib.sha256(f"{LEXICAL_PARTS_VERSION}\x1f{tokenizer_key}\x1f".encode())
    titles, summaries, bodies = (
        (_utf8_slices(pages.column(name).chunk(0)) for name in ("title", "summary", "content_md")) if pages.num_rows else ((), (), ())
    )
    extras = [lexical.wiki_extra(k, a) for k, a in zip(pages.column("page_key").to_pylist(), pages.column("aliases").to_pylist())]
    out = []
    for title, summary, body, extra in zip(titles, summaries, bodies, extras):
        h = start.copy()
        h.update(title or b"")  # titles are never null (the schema); a null body reads "None", as `documents` formats it
        h.update(b"\x1f")
        h.update(summary or b"")
        h.update(b"\x1f")
        h.update(b"None" if body is None else body)
        h.update(f"\n{extra}".encode())
        out.append(h.hexdigest()[:24])
    return out


def _utf8_slices(values: pa.Array) -> list[memoryview | None]:
    """Each value of a string array as a view of its UTF-8 bytes (None for a null), without copying them."""
    _, offsets, data = values.buffers()
    width = np.int64 if pa.types.is_large_string(values.type) else np.int32
    ends = np.frombuffer(offsets, dtype=width)[values.offset : values.offset + len(values) + 1].tolist()
    text = memoryview(data) if data is not None else memoryview(b"")
    valid = values.is_valid().to_numpy(zero_copy_only=False).tolist() if values.null_count else [True] * len(values)
    return [text[ends[i] : ends[i + 1]] if ok else None for i, ok in enumerate(valid)]


def _earlier_counts(
    cached: pa.Table, spans: Mapping[str, tuple[int, int]], tokenizer_key: str, previous: pa.Table | None
) -> dict[str, tuple[Sequence[str], dict[str, float]]]:
    """page key -> (its earlier document, that document's cached term counts), for the earlier pages whose
    text the cache still holds (a cache and snapshot of different builds hold none in common)."""
    if previous is None or not previous.num_rows:
        return {}
    out: dict[str, tuple[Sequence[str], dict[str, float]]] = {}
    for page, doc in zip(previous.column("page_key").to_pylist(), lexical.documents("wiki", {"wiki_pages": previous})):
        if (at := spans.get(_page_hash(tokenizer_key, doc))) is not None:
            part = cached.slice(at[0], at[1] - at[0])
            weights = pc.list_flatten(part.column("weights")).to_numpy(zero_copy_only=False)  # one page: one weight a term
            out[page] = (doc, dict(zip(part.column("term").to_pylist(), weights.tolist())))
    return out


def _edited_counts(
    before: Sequence[str], counts: Mapping[str, float], after: Sequence[str], tokenize: Callable[[str], list[str]]
) -> dict[str, float] | None:
    """`after`'s weighted term counts from `before`'s (`counts`): each field's lines that `after` lacks are
    taken away, its new lines added (`tokenize.changed_line_pieces`); None when a field cannot be cut into lines."""
    out = Counter(counts)
    for weight, old, new in zip(FIELD_WEIGHTS, before, after):
        if old == new:
            continue
        changed = changed_line_pieces(old or "", new or "")
        if changed is None:
            return None
        was, now = Counter(changed[0]), Counter(changed[1])
        for piece, n in (now - was).items():
            for term in tokenize(piece):
                out[term] += weight * n
        for piece, n in (was - now).items():
            for term in tokenize(piece):
                out[term] -= weight * n
    if any(n < 0 for n in out.values()):
        return None
    return {term: n for term, n in out.items() if n > 0}


def _cached_wiki(wh: Warehouse) -> tuple[pa.Table, dict[str, tuple[int, int]]]:
    """The wiki postings cache and each page text's (start, end) rows in it, kept in the file's own metadata
    (so they always describe its rows); found from the rows for a cache written before they were kept."""
    table, _ = _cache_file(wh, WIKI_PARTS)
    if not table.num_rows:
        return table, {}
    try:
        stored = json.loads((table.schema.metadata or {}).get(SPANS_KEY.encode(), b"{}"))
    except ValueError:
        stored = {}
    if stored and max(en for _, en in stored.values()) == table.num_rows:
        return table, {h: (int(st), int(en)) for h, (st, en) in stored.items()}
    return table, _spans(table.column("article_id"))


def _spans(keys: pa.ChunkedArray | pa.Array) -> dict[str, tuple[int, int]]:
    """(start, end) of each run of equal keys."""
    return {key: (start, start + n) for key, start, n in _runs(keys)}


def _gathered(table: pa.Table, runs: Sequence[tuple[int, int]]) -> pa.Table:
    """The rows of `runs` ((start, end) each) in order, as slices of `table`: adjacent runs become one."""
    merged: list[list[int]] = []
    for st, en in runs:
        if merged and merged[-1][1] == st:
            merged[-1][1] = en
        elif en > st:
            merged.append([st, en])
    return pa.concat_tables([table.slice(st, en - st) for st, en in merged]) if merged else table.schema.empty_table()


def _stable_argsort(keys: np.ndarray) -> np.ndarray:
    """`np.argsort(keys, kind="stable")` of term ids (0 <= id < 2**32) by 16-bit digits, least significant
    first: numpy sorts 16-bit keys by radix in linear time, about five times faster at millions of rows."""
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    high = keys >> 16
    if high.any():
        order = order[np.argsort(high[order].astype(np.uint16), kind="stable")]
    return order


@dataclass(frozen=True)
class Merged:
    """One index's `lexical_index` rows and its weighted document lengths (the per-row sums of its weights,
    what `lexical.lengths_table` stores beside the postings)."""

    postings: pa.Table
    lengths: np.ndarray


def _merged_index(name: str, table: pa.Table, shifts: np.ndarray, size: int) -> Merged:
    """One index of `size` rows from its units' postings in row order; `shifts` is each postings row's
    first row in the index (its unit's start). Row numbers stay int32 throughout (an index's rows fit, as
    the stored column says).

    The postings are shifted and regrouped by term in Arrow (`list_parent_indices`, a take of the term rows
    in term order, flattened), which leaves the GIL to other threads: a build merges these beside the wiki's
    aggregation (`builder.bucket_prefetch`), and numpy's `repeat` and fancy indexing held the GIL for about
    2 s of a 10,000-article merge."""
    if not table.num_rows:
        return Merged(lexical.postings_table({name: ([], [], [])}), np.zeros(size, np.float64))
    table = table.select(MERGED_COLUMNS).combine_chunks()
    encoded = pc.dictionary_encode(table.column("term").chunk(0))
    rank = pc.array_sort_indices(encoded.dictionary).to_numpy()  # ids are ranks in code point order (`BM25Index`)
    ids = np.empty_like(rank)
    ids[rank] = np.arange(len(rank))
    ids = ids[encoded.indices.to_numpy()].astype(np.int64)
    terms = encoded.dictionary.take(pa.array(rank))
    rows_col, weights_col = table.column("rows").chunk(0), table.column("weights").chunk(0)
    lengths = pc.list_value_length(rows_col).to_numpy(zero_copy_only=False).astype(np.int64)
    shift = pc.take(pa.array(shifts.astype(np.int32)), pc.list_parent_indices(rows_col))
    flat_rows = pc.add(pc.list_flatten(rows_col).cast(pa.int32()), shift)
    flat_weights = pc.list_flatten(weights_col).cast(pa.float32())
    offsets = pc.subtract(rows_col.offsets, rows_col.offsets[0])  # from 0, as the flattened values are
    del table, shift
    row_lengths = row_sums(flat_rows.to_numpy(), flat_weights.to_numpy(), size)  # whole numbers: exact in any order
    by_term = pa.array(_stable_argsort(ids))  # rows stay ascending inside each term
    rows_sorted = pc.list_flatten(pa.ListArray.from_arrays(offsets, flat_rows).take(by_term))
    weights_sorted = pc.list_flatten(pa.ListArray.from_arrays(offsets, flat_weights).take(by_term))
    del flat_rows, flat_weights
    indptr = np.concatenate([[0], np.cumsum(np.bincount(ids, weights=lengths, minlength=len(terms)))]).astype(np.int32)
    postings = pa.table(
        {
            "index": pa.array([name] * len(terms), pa.string()),
            "term": terms,
            "rows": pa.ListArray.from_arrays(pa.array(indptr), rows_sorted),
            "weights": pa.ListArray.from_arrays(pa.array(indptr), weights_sorted),
        }
    )
    return Merged(postings, row_lengths)


def wiki_index(
    wh: Warehouse, tables: Mapping[str, pa.Table], tokenizer: str, previous: Callable[[set[str]], pa.Table | None] = lambda keys: None
) -> Merged:
    """The wiki's index from its per-page cache (`wiki_units`), the rewritten cache written while it merges."""
    with ThreadPoolExecutor(max_workers=1) as aside:
        writes: list[Future[None]] = []
        units = wiki_units(wh, tables, tokenizer, previous, lambda write: writes.append(aside.submit(write)))
        merged = _merged_index("wiki", *units, tables["wiki_pages"].num_rows)
        for write in writes:
            write.result()  # a failed write fails the index, as it would have written first
    return merged


def bucket_index(parts: Sequence[BucketParts], name: str) -> Merged:
    """One article index: the buckets' postings merged in bucket order."""
    units, offset = [], 0
    for part in parts:
        units += [(offset + u.start, u.postings) for u in part.units[name] if u.postings.num_rows]
        offset += part.sizes[name]
    table = pa.concat_tables([t for _, t in units]) if units else PARTS_SCHEMA.empty_table().select(MERGED_COLUMNS)
    return _merged_index(name, table, np.repeat([st for st, _ in units], [t.num_rows for _, t in units]).astype(np.int64), offset)


def merged_table(indexes: Mapping[str, Merged]) -> tuple[pa.Table, pa.Table]:
    """The `lexical_index` table and its lengths table (`lexical.lengths_table`) from each index
    (`bucket_index`, `wiki_index`), in `lexical.INDEXES` order."""
    names = list(lexical.INDEXES)
    lengths = pa.table({"index": pa.array(names, pa.string()), "lengths": pa.array([indexes[n].lengths for n in names], pa.list_(pa.float64()))})
    return pa.concat_tables([indexes[name].postings for name in names]), lengths
