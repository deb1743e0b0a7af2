"""Snapshot assembly re-tokenises only rebuilt articles, and the merged lexical index equals a whole build."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from petrichor_core.config import BUCKETS
from petrichor_core.text import lexical
from petrichor_pipeline.builder import lexical_parts
from petrichor_pipeline.builder.publish import _bucket_tables, assemble_tables
from petrichor_pipeline.builder.warehouse import Warehouse
from petrichor_pipeline.resources import build_context
from tests.conftest import isolated_env

pytestmark = pytest.mark.slow  # copies the built corpus


def _warehouse_copy(built_corpus, tmp_path, monkeypatch):
    """A build context over a copy of the built corpus' warehouse (no embedding cache), in its own environment."""
    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir / "warehouse", data / "warehouse", ignore=shutil.ignore_patterns("embedding_cache"))
    isolated_env(monkeypatch, data, built_corpus.corpus_dir, tmp_path / "home")
    return build_context(str(data))


def test_merged_postings_equal_a_whole_build_and_unchanged_buckets_are_reused(built_corpus, tmp_path, monkeypatch):
    ctx = _warehouse_copy(built_corpus, tmp_path, monkeypatch)
    tables = assemble_tables(ctx)
    whole = lexical.to_table(lexical.build_indexes(tables, ctx.settings.lexical_tokenizer))
    assert tables["lexical_index"].equals(whole)
    # the lengths the merge sums as it goes are the ones the indexes give
    tok = ctx.settings.lexical_tokenizer
    parts = [lexical_parts.bucket_parts(ctx.warehouse, b, _bucket_tables(ctx, b), tok) for b in BUCKETS]
    merged = {name: lexical_parts.bucket_index(parts, name) for name in lexical_parts.BUCKET_INDEXES}
    merged["wiki"] = lexical_parts.wiki_index(ctx.warehouse, tables, tok)
    postings, lengths = lexical_parts.merged_table(merged)
    assert postings.equals(whole)
    assert lengths.equals(lexical.lengths_table(lexical.from_table(whole, lexical.sizes(tables))))

    # an article that was rebuilt is re-tokenised; every other article (of its bucket too) reads its cached postings
    touched = next(b for b in BUCKETS if len(set(_bucket_tables(ctx, b)["chunks"].column("article_id").to_pylist())) > 1)
    sidecar = ctx.warehouse.read_json("chunks", touched)
    aid = next(iter(sidecar["keys"]))
    sidecar["keys"][aid] += "-rebuilt"
    ctx.warehouse.write_json("chunks", touched, sidecar)
    parts = {b: lexical_parts.bucket_parts(ctx.warehouse, b, _bucket_tables(ctx, b), ctx.settings.lexical_tokenizer) for b in BUCKETS}
    assert {b: p.tokenised for b, p in parts.items() if p.tokenised} == {touched: 1}
    assert parts[touched].reused == _bucket_tables(ctx, touched)["articles"].num_rows - 1
    assert assemble_tables(ctx)["lexical_index"].equals(whole)

    # with every article and wiki page cached, assembling tokenises nothing
    built = []
    original = lexical_parts.BM25Index.build
    monkeypatch.setattr(lexical_parts.BM25Index, "build", classmethod(lambda cls, docs, tok: built.append(1) or original(docs, tok)))
    assert assemble_tables(ctx)["lexical_index"].equals(whole)
    assert built == []

    # a bucket cache records where each article's postings lie; one without that record is cut by its rows
    cached = ctx.warehouse.read_arrow("lexical_parts", f"bucket={touched}")
    assert lexical_parts.SPANS_KEY.encode() in (cached.schema.metadata or {})
    ctx.warehouse.write_arrow("lexical_parts", f"bucket={touched}", cached.replace_schema_metadata(None))
    assert assemble_tables(ctx)["lexical_index"].equals(whole)
    assert built == []


def test_merged_postings_follow_a_deleted_and_a_rebuilt_article(built_corpus, tmp_path, monkeypatch):
    """Articles leave and change inside one bucket: the merge still equals a build over the whole snapshot."""
    ctx = _warehouse_copy(built_corpus, tmp_path, monkeypatch)
    assemble_tables(ctx)  # fills the cache
    bucket = max(BUCKETS, key=lambda b: _bucket_tables(ctx, b)["articles"].num_rows)
    articles = ctx.warehouse.read("articles", bucket)
    gone, changed = articles.column("article_id").to_pylist()[:2]
    ctx.warehouse.write("articles", articles.filter(pc.not_equal(articles.column("article_id"), gone)), bucket)
    chunks = ctx.warehouse.read("chunks", bucket)
    retitled = pc.if_else(pc.equal(chunks.column("article_id"), changed), pa.scalar("retitled heading"), chunks.column("heading"))
    ctx.warehouse.write("chunks", chunks.set_column(chunks.schema.get_field_index("heading"), "heading", retitled), bucket)
    sidecar = ctx.warehouse.read_json("chunks", bucket)
    sidecar["keys"][changed] += "-rebuilt"
    ctx.warehouse.write_json("chunks", bucket, sidecar)

    tables = assemble_tables(ctx)
    assert gone not in tables["articles"].column("article_id").to_pylist()
    whole = lexical.to_table(lexical.build_indexes(tables, ctx.settings.lexical_tokenizer))
    assert tables["lexical_index"].equals(whole)
    assert lexical_parts.bucket_parts(ctx.warehouse, bucket, _bucket_tables(ctx, bucket), ctx.settings.lexical_tokenizer).tokenised == 0


def test_wiki_postings_retokenise_only_edited_pages_and_read_a_cache_without_spans(built_corpus, tmp_path, monkeypatch):
    """The wiki cache slices reused pages by the spans its file records; a cache from before spans were
    recorded is read by its rows. Both merge to the index a whole build gives."""
    ctx = _warehouse_copy(built_corpus, tmp_path, monkeypatch)
    assemble_tables(ctx)  # fills the cache
    pages = ctx.warehouse.read("wiki_pages")
    edited = pc.if_else(pc.equal(pa.array(range(pages.num_rows)), 1), pa.scalar("an edited body"), pages.column("content_md"))
    ctx.warehouse.write("wiki_pages", pages.set_column(pages.schema.get_field_index("content_md"), "content_md", edited))
    counted = _count_tokenised_pages(monkeypatch)
    tables = assemble_tables(ctx)
    assert counted == [1]  # the edited page alone
    whole = lexical.to_table(lexical.build_indexes(tables, ctx.settings.lexical_tokenizer))
    assert tables["lexical_index"].equals(whole)

    cached = ctx.warehouse.read_arrow("lexical_parts", f"bucket={lexical_parts.WIKI_PARTS}")
    assert lexical_parts.SPANS_KEY.encode() in (cached.schema.metadata or {})
    ctx.warehouse.write_arrow("lexical_parts", f"bucket={lexical_parts.WIKI_PARTS}", cached.replace_schema_metadata(None))
    counted.clear()
    assert assemble_tables(ctx)["lexical_index"].equals(whole)
    assert counted == []


def test_a_wiki_cache_that_cannot_be_written_fails_the_index(built_corpus, tmp_path, monkeypatch):
    """The cache is written beside the merge, and its failure (a full disk) still fails the index."""
    ctx = _warehouse_copy(built_corpus, tmp_path, monkeypatch)
    tables = assemble_tables(ctx)
    write_arrow = Warehouse.write_arrow

    def full(self, asset, name, table, *options):
        if name == f"bucket={lexical_parts.WIKI_PARTS}":
            raise OSError(28, "No space left on device")
        return write_arrow(self, asset, name, table, *options)

    monkeypatch.setattr(Warehouse, "write_arrow", full)
    pages = tables["wiki_pages"]
    edited = pc.if_else(pc.equal(pa.array(range(pages.num_rows)), 0), pa.scalar("a new body"), pages.column("content_md"))
    tables = {**tables, "wiki_pages": pages.set_column(pages.schema.get_field_index("content_md"), "content_md", edited)}
    with pytest.raises(OSError, match="No space left"):
        lexical_parts.wiki_index(ctx.warehouse, tables, ctx.settings.lexical_tokenizer)


def _count_tokenised_pages(monkeypatch) -> list[int]:
    """Record each document `lexical_parts` tokenises whole."""
    counted: list[int] = []
    original = lexical_parts.weighted_counts
    monkeypatch.setattr(lexical_parts, "weighted_counts", lambda fields, tok: counted.append(1) or original(fields, tok))
    return counted


def test_an_edited_wiki_page_is_counted_from_its_earlier_text(built_corpus, tmp_path, monkeypatch):
    """Pages whose earlier text the cache holds get their counts from it, only the changed lines tokenised
    (a hub page gains a line, another loses one, a third gets a new title and summary); the index equals a
    whole build's. Pages the earlier snapshot does not hold, or hold with variant markup, are tokenised whole."""
    ctx = _warehouse_copy(built_corpus, tmp_path, monkeypatch)
    wh, tokenizer = ctx.warehouse, ctx.settings.lexical_tokenizer
    before = wh.read("wiki_pages")
    lexical_parts.wiki_units(wh, {"wiki_pages": before}, tokenizer)  # the cache holds every page as it was
    rows = before.to_pylist()
    longest = max(range(len(rows)), key=lambda i: len(rows[i]["content_md"]))
    others = [i for i in range(len(rows)) if i != longest][:4]
    rows[longest]["content_md"] += "\nA line about Redis 缓存 added.\n\u3000indented 段落"
    lines = rows[others[0]]["content_md"].split("\n")
    rows[others[0]]["content_md"] = "\n".join(lines[:-1]) if len(lines) > 1 else "gone"
    rows[others[1]].update(title="A new title", summary="一个新的摘要")
    rows[others[2]]["content_md"] += "\n-{zh-hans:缓存;zh-hant:快取}-"  # markup: tokenised whole
    rows[others[3]]["content_md"] += "\nnot in the earlier snapshot"
    after = pa.Table.from_pylist(rows, schema=before.schema)
    earlier = before.filter(pc.not_equal(before.column("page_key"), rows[others[3]]["page_key"]))
    asked: list[set[str]] = []
    counted = _count_tokenised_pages(monkeypatch)
    got = lexical_parts.wiki_index(wh, {"wiki_pages": after}, tokenizer, lambda keys: asked.append(keys) or earlier).postings
    assert asked == [{rows[i]["page_key"] for i in (longest, *others)}]
    assert len(counted) == 2  # the page with markup and the page the earlier snapshot lacks
    whole = lexical.to_table({"wiki": lexical.build_indexes({"wiki_pages": after, **_empty_tables()}, tokenizer)["wiki"]})
    assert got.equals(whole)


def _empty_tables() -> dict[str, pa.Table]:
    from petrichor_core.contract.schemas import SCHEMAS

    return {name: SCHEMAS[name].empty_table() for name in ("articles", "chunks", "chunk_windows", "questions", "tree_nodes")}


_texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)


@given(
    st.lists(st.tuples(_texts, _texts, st.none() | _texts, _texts, st.none() | st.lists(_texts, max_size=3)), max_size=8),
    st.integers(0, 3),
)
def test_page_hashes_from_the_buffers_equal_those_of_the_documents(rows, cut):
    """The wiki cache's keys are hashed off the table's UTF-8 buffers: the same as hashing each document, for
    any text, missing summaries and aliases, and a table that is a slice of another."""
    table = pa.table(
        {
            "page_key": pa.array([r[0] for r in rows], pa.string()),
            "title": pa.array([r[1] for r in rows], pa.string()),
            "summary": pa.array([r[2] for r in rows], pa.string()),
            "content_md": pa.array([r[3] for r in rows], pa.string()),
            "aliases": pa.array([r[4] for r in rows], pa.list_(pa.string())),
        }
    ).slice(min(cut, len(rows)))
    expected = [lexical_parts._page_hash("bigram", doc) for doc in lexical.documents("wiki", {"wiki_pages": table})]
    assert lexical_parts._page_hashes("bigram", table) == expected


def test_the_wiki_step_keeps_the_table_it_replaces_for_the_earlier_texts(built_corpus, tmp_path, monkeypatch):
    """Each run of the wiki step moves the table it replaces aside; staging reads an edited page's earlier
    text from it. A warehouse without a current table keeps no stale one."""
    from petrichor_pipeline.builder.steps.wiki_pages import REPLACED, replaced_pages, wiki_pages_step

    ctx = _warehouse_copy(built_corpus, tmp_path, monkeypatch)
    wh = ctx.warehouse
    before = wh.read("wiki_pages")
    wiki_pages_step(ctx)
    kept = wh.read_arrow("wiki_pages", REPLACED)
    assert kept is not None and kept.equals(before) and wh.read("wiki_pages").equals(before)  # nothing changed: the same pages
    keys = set(before.column("page_key").to_pylist()[:3])
    got = replaced_pages(ctx, keys, list(lexical.WIKI_COLUMNS))
    assert set(got.column("page_key").to_pylist()) == keys and got.column_names == list(lexical.WIKI_COLUMNS)

    wh.arrow_path("wiki_pages", "all").unlink()
    wiki_pages_step(ctx)  # no current table: the kept one would be older than the next run's: gone
    assert wh.read_arrow("wiki_pages", REPLACED) is None and replaced_pages(ctx, keys, ["page_key"]) is None
