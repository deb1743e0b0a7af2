"""`petrichor search` and `petrichor ask` read the published snapshot; citations point at exact text."""

from __future__ import annotations

import contextlib
import io
import json

import pyarrow.parquet as pq
import pytest

from petrichor.cli import main
from tests.conftest import isolated_env

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess


def _cli(built_corpus, monkeypatch, *argv: str) -> dict:
    isolated_env(monkeypatch, built_corpus.data_dir, built_corpus.corpus_dir, built_corpus.dagster_home)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(list(argv)) == 0
    return json.loads(buf.getvalue())


def _articles(built_corpus) -> dict:
    snaps = built_corpus.data_dir / "snapshots"
    version = (snaps / "CURRENT").read_text().strip()
    return {r["article_id"]: r for r in pq.read_table(snaps / version / "articles.parquet").to_pylist()}


@pytest.mark.parametrize(
    "question",
    [
        "What happens to the serving snapshot when a build fails?",
        "快照默认保留多少个版本？",
    ],
)
def test_ask_returns_citations_that_slice_the_article_version(built_corpus, monkeypatch, question):
    doc = _cli(built_corpus, monkeypatch, "ask", "--json", question)
    assert doc["answer"] and doc["trace_id"]
    assert doc["citations"], doc
    articles = _articles(built_corpus)
    for c in doc["citations"]:
        art = articles[c["article_id"]]
        assert c["article_version"] == art["article_version"]
        assert c["chunk_id"].startswith(c["article_id"] + ":chunk-")
        assert art["content"][c["quote_start"] : c["quote_end"]] == c["quote"]
        assert c["chunk_id"] in {e["chunk_id"] for e in doc["evidence"]}  # cited text was read


def test_search_json_returns_locators_not_full_text(built_corpus, monkeypatch):
    doc = _cli(built_corpus, monkeypatch, "search", "--json", "reciprocal rank fusion constant")
    assert doc["snapshot_version"] and doc["query"] == "reciprocal rank fusion constant"
    assert doc["candidates"]
    for c in doc["candidates"]:
        assert {"article_id", "title", "heading_path", "snippet", "routes", "score"} <= set(c)
        assert any(c.get(k) for k in ("chunk_id", "page_key", "node_key"))
        assert len(c["snippet"]) <= 221
        assert "content" not in c
    assert "degraded" in doc["diagnostics"]


def test_ask_without_a_snapshot_fails_clearly(tmp_path, monkeypatch):
    isolated_env(monkeypatch, tmp_path / "data", tmp_path / "corpus", tmp_path / "home")
    with pytest.raises(SystemExit) as exc:
        main(["ask", "anything"])
    assert "petrichor build" in str(exc.value)
