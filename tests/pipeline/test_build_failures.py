"""Bad input and failing models at the build level: clear per-file errors, fallbacks, nothing lost."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli_build
from tests.models.fake_openai import CHAT, EMBEDDINGS, embedding_reply, error_reply
from tests.pipeline.snapshot_io import current_version, snapshot_rows
from tests.sources.helpers import three_page_pdf, write

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess

GOOD = "# Good article\n\nThe service starts on port 8000 and answers health checks.\n\n## Details\n\nIt keeps five snapshots.\n"


def _small_corpus(root):
    write(root, "kb/_kb.yaml", "name: KB\ntenant: acme\n")
    write(root, "kb/good.md", GOOD)
    write(root, "kb/manual.pdf", three_page_pdf())
    write(root, "kb/latin1.md", "caf\xe9 au lait".encode("latin-1"))
    write(root, "kb/empty.md", "")
    write(root, "kb/broken.md", "---\ntitle: [unclosed\n---\n\nBody\n")
    write(root, "kb/binary.md", b"\x00\x01\x02binary")
    return root


def test_bad_files_are_reported_and_the_rest_builds(tmp_path, monkeypatch):
    monkeypatch.setenv("PETRICHOR_EMBED", "off")
    corpus = _small_corpus(tmp_path / "corpus")
    summary = run_cli_build(tmp_path / "data", corpus, tmp_path / "home")
    assert summary["_exit_code"] == 0
    reasons = {e["path"]: e["reason"] for e in summary["errors"]}
    assert set(reasons) == {"kb/latin1.md", "kb/empty.md", "kb/broken.md", "kb/binary.md"}
    assert "invalid UTF-8 at byte 3" in reasons["kb/latin1.md"]
    assert summary["articles"]["total"] == 2
    articles = {a["path"]: a for a in snapshot_rows(tmp_path / "data", "articles")}
    assert set(articles) == {"kb/good.md", "kb/manual.pdf"}
    assert "Installation Guide" in articles["kb/manual.pdf"]["content"]
    assert any("page" in w and "2" in w for w in articles["kb/manual.pdf"]["warnings"])
    manifest = json.loads((tmp_path / "data" / "snapshots" / current_version(tmp_path / "data") / "manifest.json").read_text())
    assert manifest["vector_tables"] == {}  # embedding switched off: lexical routes only


def test_a_failing_chat_endpoint_degrades_to_fallbacks_and_still_publishes(tmp_path, monkeypatch, fake):
    corpus = tmp_path / "corpus"
    write(corpus, "kb/good.md", GOOD)
    fake.script(CHAT, *[error_reply(500)] * 200)
    env = {"PETRICHOR_EMBED": "off", "PETRICHOR_LLM_BASE_URL": fake.base_url, "PETRICHOR_LLM_MODEL": "test-model", "PETRICHOR_LLM_MAX_RETRIES": "0"}
    summary = run_cli_build(tmp_path / "data", corpus, tmp_path / "home", env=env)
    assert summary["_exit_code"] == 0 and summary["published"]
    assert summary["warnings"]
    questions = snapshot_rows(tmp_path / "data", "questions")
    chunks = snapshot_rows(tmp_path / "data", "chunks")
    assert len(questions) == 3 * len(chunks)
    assert all(q["question"].startswith(("What is", "What are", "How do I")) for q in questions)  # template fallback
    pages = snapshot_rows(tmp_path / "data", "wiki_pages")
    assert [p["kind"] for p in pages] == ["source"]  # failed extraction still saves the source page
    assert all(n["summary"] for n in snapshot_rows(tmp_path / "data", "tree_nodes"))  # local summaries


def test_failed_embeddings_stay_pending_and_the_next_build_fills_them(tmp_path, monkeypatch, fake):
    corpus = tmp_path / "corpus"
    write(corpus, "kb/good.md", GOOD)
    env = {
        "PETRICHOR_EMBED_BASE_URL": fake.base_url,
        "PETRICHOR_EMBED_MODEL": "test-embed",
        "PETRICHOR_EMBED_MAX_RETRIES": "0",
        "PETRICHOR_EMBED_CACHE": str(tmp_path / "cache"),
    }
    fake.script(EMBEDDINGS, embedding_reply([[1.0, 0.0, 0.0]]), *[error_reply(500)] * 20)  # probe, then failures
    first = run_cli_build(tmp_path / "data", corpus, tmp_path / "home", env=env)
    assert first["_exit_code"] == 0 and first["published"]
    assert first["embedded_texts"] == 0 and any("pending" in w for w in first["warnings"]), first["warnings"]
    data = tmp_path / "data"
    assert json.loads((data / "snapshots" / current_version(data) / "manifest.json").read_text())["vector_tables"] == {}

    def vectors(n):
        return embedding_reply([[1.0, float(i), 0.5] for i in range(n)])

    fake.replies[EMBEDDINGS].clear()
    n_chunks = len(snapshot_rows(data, "chunks"))
    # each build asks the dimension once (its runs are told it), then chunks; the offline model's questions
    # are searched by no default route, so they are not embedded
    fake.script(EMBEDDINGS, embedding_reply([[1.0, 0.0, 0.0]]), vectors(n_chunks))
    second = run_cli_build(data, corpus, tmp_path / "home", env=env)
    assert second["_exit_code"] == 0 and second["partitions"]["materialized"]  # pending vectors keep the bucket stale
    assert second["articles"]["built"] == 0 and second["embedded_texts"] == n_chunks
    manifest = json.loads((data / "snapshots" / current_version(data) / "manifest.json").read_text())
    assert manifest["vector_tables"]["chunk_vectors"]["rows"] == n_chunks
    assert "question_vectors" not in manifest["vector_tables"]


def test_with_embedding_off_a_second_build_skips_everything(tmp_path):
    corpus = tmp_path / "corpus"
    write(corpus, "kb/good.md", GOOD)
    env = {"PETRICHOR_EMBED": "off"}
    assert run_cli_build(tmp_path / "data", corpus, tmp_path / "home", env=env)["published"]
    again = run_cli_build(tmp_path / "data", corpus, tmp_path / "home", env=env)
    assert again["partitions"]["materialized"] == [] and not again["published"]
