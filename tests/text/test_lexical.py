"""The stored lexical index equals the one built from the tables, term by term and row by row."""

from __future__ import annotations

import numpy as np

from petrichor_core.contract.schemas import to_table
from petrichor_core.text import lexical


def _tables():
    articles = to_table(
        "articles",
        [
            {"article_id": "a1", "kb_id": "kb", "title": "部署指南", "tenant": "t"},
            {"article_id": "a2", "kb_id": "kb", "title": "Redis notes", "tenant": "t"},
        ],
    )
    chunks = to_table(
        "chunks",
        [
            {
                "chunk_id": "a1:chunk-001",
                "article_id": "a1",
                "heading": "安装",
                "heading_path": ["安装"],
                "index_text": "部署指南\n安装\n下载并启动 Redis",
            },
            {
                "chunk_id": "a2:chunk-001",
                "article_id": "a2",
                "heading": "Persistence",
                "heading_path": ["Persistence", "AOF"],
                "index_text": "Redis notes\nAOF rewrite",
            },
            {"chunk_id": "a2:chunk-002", "article_id": "a2", "heading": "Empty", "heading_path": [], "index_text": ""},
        ],
    )
    questions = to_table("questions", [{"question_id": "a1:chunk-001:q0", "chunk_id": "a1:chunk-001", "index_text": "怎么部署 Redis？"}])
    wiki = to_table(
        "wiki_pages", [{"page_key": "entity-redis", "title": "Redis", "summary": "内存数据库", "content_md": "# Redis", "aliases": ["redis-server"]}]
    )
    tree = to_table("tree_nodes", [{"node_key": "aa1-root", "title": "部署指南", "summary": "", "content": "导语"}])
    windows = to_table("chunk_windows", [{"window_id": "a1:chunk-001:w00", "chunk_id": "a1:chunk-001", "index_text": "部署指南\n安装\n下载"}])
    return {"articles": articles, "chunks": chunks, "chunk_windows": windows, "questions": questions, "wiki_pages": wiki, "tree_nodes": tree}


def test_documents_follow_the_reference_fields():
    docs = list(lexical.documents("chunk", _tables()))
    assert docs[0] == ("部署指南 安装", "部署指南 › 安装", "部署指南\n安装\n下载并启动 Redis")
    assert docs[1] == ("Redis notes Persistence", "Redis notes › Persistence › AOF", "Redis notes\nAOF rewrite")
    assert list(lexical.documents("question", _tables())) == [("部署指南 安装", "部署指南 › 安装", "怎么部署 Redis？")]
    assert list(lexical.documents("window", _tables())) == [("部署指南 安装", "部署指南 › 安装", "部署指南\n安装\n下载")]
    assert list(lexical.documents("wiki", _tables())) == [("Redis", "内存数据库", "# Redis\nentity-redis redis-server")]


def test_stored_postings_round_trip_exactly():
    tables = _tables()
    built = lexical.build_indexes(tables)
    sizes = {name: tables[t].num_rows for name, t in lexical.INDEXES.items()}
    back = lexical.from_table(lexical.to_table(built), sizes)
    for name in lexical.INDEXES:
        a, b = built[name], back[name]
        assert a.vocab == b.vocab, name
        for field in ("indptr", "indices", "data", "lengths"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), (name, field)
        terms = list(a.vocab)[:5]
        for got, want in zip(b.score(terms), a.score(terms)):
            assert np.array_equal(got, want)
