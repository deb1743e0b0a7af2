"""Serving tokenises with the tokenizer the snapshot was built with (its manifest's), not its own setting."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from petrichor_core.contract.manifest import Manifest
from petrichor_core.text.lang import init_jieba
from petrichor_serving.app import create_app
from petrichor_serving.recall.routes import CHUNK_BM25
from petrichor_serving.services import Services, ServingSettings
from petrichor_serving.snapshot import SnapshotStore
from tests.pipeline.tiny_corpus import build, write_corpus

ARTICLES = {
    "kb/cat.md": "# 宠物\n\n我家的猫很可爱，每天睡觉。\n",
    "kb/waiter.md": "# 餐厅\n\n我们和服务员聊天，点了一份面条。\n",
    "kb/ports.md": "# Ports\n\nThe service listens on port 8000 and answers health checks.\n",
}
"""`猫` is a jieba word of `cat.md`; under bigrams that article has no token `猫` at all (`的猫`, `猫很`).
`waiter.md` holds the bigram `和服` across a word boundary, which jieba does not cut."""


@pytest.fixture(scope="module")
def jieba_build(tmp_path_factory):
    init_jieba()  # the dictionary loads once for the build and the searches
    root = tmp_path_factory.mktemp("jieba-build")
    summary = build(root / "data", write_corpus(root / "corpus", ARTICLES), root / "home", env={"PETRICHOR_TOKENIZER": "jieba"})
    assert summary["_exit_code"] == 0 and summary["published"], summary
    return root / "data"


@pytest.mark.slow  # builds a corpus
def test_a_jieba_snapshot_is_served_with_jieba(jieba_build, monkeypatch):
    monkeypatch.setenv("PETRICHOR_TOKENIZER", "bigram")  # the server's own setting does not count
    store = SnapshotStore(jieba_build)
    assert store.refresh()
    snap = store.current
    assert snap.manifest.tokenizer == "jieba"
    assert snap.recall.tokenizer.name == "jieba"
    vocab = snap.recall.bm25["chunk"].vocab
    assert "猫" in vocab and "的猫" not in vocab  # the stored postings are jieba's, not re-tokenised

    cat_chunk = next(
        c
        for c, aid in zip(snap.tables["chunks"].column("chunk_id").to_pylist(), snap.tables["chunks"].column("article_id").to_pylist())
        if snap.articles[aid]["title"] == "宠物"
    )

    services = Services(ServingSettings(data_dir=jieba_build), store, keys=None, chat=None, embedder=None)
    with TestClient(create_app(services, watch=False)) as client:
        found = client.post("/api/knowledge/search", json={"query": "猫", "limit": 3})
        assert found.status_code == 200, found.text
        top = found.json()["candidates"]
        assert top and top[0]["title"] == "宠物", top
        assert top[0]["chunk_id"] == cat_chunk and CHUNK_BM25 in top[0]["routes"], top[0]  # found lexically, by jieba's word
        kimono = client.post("/api/knowledge/search", json={"query": "和服", "limit": 3}).json()["candidates"]
        assert all(c["title"] != "餐厅" for c in kimono), kimono  # a bigram index would match it
        # and answered by serving's own offline answerer (no chat model configured), quoting the cat's sentence
        reply = client.post("/api/assistant/chat", json={"question": "我家的猫每天做什么？"})
        assert reply.status_code == 200, reply.text
        cited = reply.json()["citations"]
        assert cited and cited[0]["chunk_id"] == cat_chunk and "睡觉" in cited[0]["quote"], reply.json()


def test_a_manifest_without_a_tokenizer_is_bigram():
    fields = dict(
        version="v",
        created_at="",
        parent_version=None,
        schema_version=1,
        chunk_algorithm_version=1,
        build_version=1,
        chat_fingerprint="",
        embed_fingerprint=None,
    )
    assert Manifest(**fields).tokenizer == "bigram"
    assert Manifest(**fields, lexical={"table": "lexical_index"}).tokenizer_revision == 1
    assert Manifest(**fields, lexical={"tokenizer": "jieba", "tokenizer_revision": 2}).tokenizer == "jieba"
