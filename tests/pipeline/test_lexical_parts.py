"""Snapshot assembly re-tokenises only rebuilt articles, and the merged lexical index equals a whole build."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from petrichor_pipeline.build import lexical_parts
from petrichor_pipeline.build.publish import _bucket_tables, assemble_tables
from petrichor_pipeline.config import BUCKETS
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.text import lexical
from tests.conftest import isolated_env

pytestmark = pytest.mark.slow  # copies the built corpus


def test_merged_postings_equal_a_whole_build_and_unchanged_buckets_are_reused(built_corpus, tmp_path, monkeypatch):
    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir / "warehouse", data / "warehouse", ignore=shutil.ignore_patterns("embedding_cache"))
    isolated_env(monkeypatch, data, built_corpus.corpus_dir, tmp_path / "home")
    ctx = build_context(str(data))
    tables = assemble_tables(ctx)
    whole = lexical.to_table(lexical.build_indexes(tables, ctx.settings.lexical_tokenizer))
    assert tables["lexical_index"].equals(whole)

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


def test_merged_postings_follow_a_deleted_and_a_rebuilt_article(built_corpus, tmp_path, monkeypatch):
    """Articles leave and change inside one bucket: the merge still equals a build over the whole snapshot."""
    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir / "warehouse", data / "warehouse", ignore=shutil.ignore_patterns("embedding_cache"))
    isolated_env(monkeypatch, data, built_corpus.corpus_dir, tmp_path / "home")
    ctx = build_context(str(data))
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


def test_wiki_postings_follow_the_wiki_steps_page_signatures(built_corpus, tmp_path, monkeypatch):
    """A page the wiki memo records is cached under its signature: a page merged again (a new signature) is
    the only one tokenised; without a memo every page is known by its text; either way the index equals a
    whole build."""
    import json

    from petrichor_pipeline.build.steps.wiki_pages import MEMO, read_wiki_memo
    from petrichor_pipeline.contract.files import write_text_atomic

    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir / "warehouse", data / "warehouse", ignore=shutil.ignore_patterns("embedding_cache"))
    isolated_env(monkeypatch, data, built_corpus.corpus_dir, tmp_path / "home")
    ctx = build_context(str(data))
    assemble_tables(ctx)  # fills the cache
    tokenised = []
    original = lexical_parts.BM25Index.build

    def counted(cls, docs, tokenize):
        docs = list(docs)
        tokenised.extend(docs)
        return original(docs, tokenize)

    monkeypatch.setattr(lexical_parts.BM25Index, "build", classmethod(counted))

    pages = ctx.warehouse.read("wiki_pages")
    row = max(range(pages.num_rows), key=lambda i: len(pages.column("content_md")[i].as_py()))
    kb, tenant, key = (pages.column(c)[row].as_py() for c in ("kb_id", "tenant", "page_key"))
    content = pages.column("content_md").to_pylist()
    content[row] += "\n\nA paragraph the page gained: quillon heron."
    ctx.warehouse.write("wiki_pages", pages.set_column(pages.schema.get_field_index("content_md"), "content_md", pa.array(content, pa.string())))
    memo = read_wiki_memo(ctx.warehouse)
    memo["pages"][kb][tenant][key][0] = "merged again"
    write_text_atomic(ctx.warehouse.root / "wiki_pages" / MEMO, json.dumps(memo))

    tables = assemble_tables(ctx)
    assert [doc[2].split("\n")[0] for doc in tokenised] == [content[row].split("\n")[0]] and "quillon" in tokenised[0][2]
    assert tables["lexical_index"].equals(lexical.to_table(lexical.build_indexes(tables, ctx.settings.lexical_tokenizer)))

    tokenised.clear()
    (ctx.warehouse.root / "wiki_pages" / MEMO).unlink()
    tables = assemble_tables(ctx)
    assert len(tokenised) == pages.num_rows  # known by their texts now, which nothing cached yet
    assert tables["lexical_index"].equals(lexical.to_table(lexical.build_indexes(tables, ctx.settings.lexical_tokenizer)))
