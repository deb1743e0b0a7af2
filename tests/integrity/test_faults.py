"""Fault injection: each fault degrades as expected, the previous snapshot keeps answering identically,
and the next healthy build publishes a complete snapshot."""

from __future__ import annotations

import errno
import json

import pytest

from petrichor_core.config import ModelEndpoint
from petrichor_core.models.chat import OpenAIChatModel
from tests.conftest import run_cli_build
from tests.integrity.helpers import QUESTION, answers, assert_complete, client_for, copy_built, current, edit_article, served_answers
from tests.models.fake_openai import CHAT, EMBEDDINGS, Reply, chat_reply, embedding_reply, error_reply
from tests.pipeline.snapshot_io import snapshot_rows
from tests.sources.helpers import write

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess


def _storm(kind: str, n: int) -> list[Reply]:
    """`n` replies of one model fault."""
    if kind == "timeout":
        return [chat_reply("{}", delay_s=1.5) for _ in range(n)]
    if kind == "429":
        return [error_reply(429, "rate limited", headers={"retry-after": "0"}) for _ in range(n)]
    if kind == "5xx":
        return [error_reply(500 + i % 4) for i in range(n)]
    if kind == "malformed":
        return [Reply(body="{not json at all") for _ in range(n)]
    if kind == "truncated":
        body = json.dumps(
            {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": '{"answer": "cut'}}]}
        )
        return [Reply(body=body[: len(body) // 2]) for _ in range(n)]
    if kind == "bad-content":  # a well-formed reply whose content is truncated JSON
        return [chat_reply('{"answer": "It stores [1') for _ in range(n)]
    raise AssertionError(kind)


KINDS = ["timeout", "429", "5xx", "malformed", "truncated", "bad-content"]


@pytest.mark.parametrize("kind", KINDS)
def test_model_faults_while_answering(built_corpus, served_snapshot, fake, kind):
    """The answerer falls back (no citation invented, 200 not 5xx); search and the snapshot are untouched."""
    _, embedder = served_snapshot
    version, healthy = served_answers(built_corpus.data_dir, embedder)
    fake.script(CHAT, *_storm(kind, 40))
    chat = OpenAIChatModel(ModelEndpoint(base_url=fake.base_url, model="test-model", api_key="k", timeout_s=0.5, max_retries=1), backoff_base_s=0.01)
    with client_for(built_corpus.data_dir, embedder, chat=chat) as client:
        res = client.post("/api/assistant/chat", json={"question": QUESTION})
        assert res.status_code == 200, res.text
        doc = res.json()
        assert doc["snapshot_version"] == version
        assert not doc["citations"] or all(c["quote"] for c in doc["citations"])
        searches = {q: a for q, a in answers(client).items() if q != QUESTION}
    assert fake.calls(CHAT), "the fault was exercised"
    assert searches == {q: a for q, a in healthy.items() if q != QUESTION}


GOOD = "# Good article\n\nThe service starts on port 8000 and answers health checks.\n\n## Details\n\nIt keeps five snapshots.\n"


def _mixed_storm(n: int) -> list[Reply]:
    """Every fault in turn, so one build meets each of them (one build per fault would take minutes)."""
    storms = [_storm(kind, n) for kind in KINDS]
    return [storm[i] for i in range(n) for storm in storms]


def test_model_faults_during_a_build_fall_back_and_lose_no_article(tmp_path, fake):
    corpus, data, home = tmp_path / "corpus", tmp_path / "data", tmp_path / "home"
    write(corpus, "kb/good.md", GOOD)
    write(corpus, "kb/other.md", GOOD.replace("Good", "Other").replace("8000", "9000"))
    first = run_cli_build(data, corpus, home, env={"PETRICHOR_EMBED": "off"})
    assert first["_exit_code"] == 0
    before = current(data)
    edit_article(corpus, "kb/good.md")
    fake.script(CHAT, *_mixed_storm(80))
    env = {
        "PETRICHOR_EMBED": "off",
        "PETRICHOR_LLM_BASE_URL": fake.base_url,
        "PETRICHOR_LLM_MODEL": "test-model",
        "PETRICHOR_LLM_MAX_RETRIES": "1",
        "PETRICHOR_LLM_TIMEOUT": "0.5",
    }
    summary = run_cli_build(data, corpus, home, env=env)
    assert summary["_exit_code"] == 0 and summary["published"], summary
    assert summary["warnings"] and fake.calls(CHAT)
    assert {a["path"] for a in snapshot_rows(data, "articles")} == {"kb/good.md", "kb/other.md"}
    assert len(snapshot_rows(data, "questions")) == 3 * len(snapshot_rows(data, "chunks"))  # template questions
    assert (data / "snapshots" / before).exists()  # the previous snapshot is retained
    assert_complete(data)

    healthy = run_cli_build(data, corpus, home, env={"PETRICHOR_EMBED": "off"})
    assert healthy["_exit_code"] == 0 and healthy["published"]
    assert_complete(data)


def test_the_embedding_endpoint_down_for_a_whole_build(tmp_path, fake):
    corpus, data, home = tmp_path / "corpus", tmp_path / "data", tmp_path / "home"
    write(corpus, "kb/good.md", GOOD)
    env = {
        "PETRICHOR_EMBED_BASE_URL": fake.base_url,
        "PETRICHOR_EMBED_MODEL": "test-embed",
        "PETRICHOR_EMBED_MAX_RETRIES": "0",
        "PETRICHOR_EMBED_CACHE": str(tmp_path / "cache"),
    }
    fake.gate = lambda path, body: (
        embedding_reply([[1.0, 0.0, 0.0]] * len(body["input"])) if path == EMBEDDINGS and isinstance(body.get("input"), list) else None
    )
    assert run_cli_build(data, corpus, home, env=env)["_exit_code"] == 0
    before = current(data)
    before_rows = snapshot_rows(data, "chunks")

    edit_article(corpus, "kb/good.md")
    fake.gate = lambda path, body: error_reply(503, "embedding service down")
    down = run_cli_build(data, corpus, home, env=env)
    # either refused outright (CURRENT untouched) or published lexical-only with vectors pending; never half a snapshot
    if down["published"]:  # lexical routes only: the chunks are all there, the vectors wait for the next build
        assert any("embedder unavailable" in w or "pending" in w for w in down["warnings"]), down["warnings"]
        assert {a["path"] for a in snapshot_rows(data, "articles")} == {"kb/good.md"}
        assert_complete(data)
        assert (data / "snapshots" / before).exists()
    else:
        assert current(data) == before and snapshot_rows(data, "chunks", before) == before_rows
    fake.gate = lambda path, body: embedding_reply([[0.0, 1.0, 0.0]] * len(body["input"] if isinstance(body.get("input"), list) else [1]))
    healthy = run_cli_build(data, corpus, home, env=env)
    assert healthy["_exit_code"] == 0 and healthy["published"], healthy
    assert not any("pending" in w or "unavailable" in w for w in healthy["warnings"]), healthy["warnings"]
    assert_complete(data)
    manifest = json.loads((data / "snapshots" / current(data) / "manifest.json").read_text())
    assert manifest["vector_tables"]["chunk_vectors"]["rows"] == manifest["tables"]["chunks"]["rows"]


@pytest.mark.parametrize("target,code", [("parquet", errno.EROFS), ("manifest", errno.ENOSPC), ("CURRENT", errno.EROFS)])
def test_a_write_failure_while_publishing(built_corpus, served_snapshot, tmp_path, monkeypatch, target, code):
    """Root ignores permissions, so the failure is injected where publishing writes (the same OSError a read-only or full disk raises)."""
    from petrichor_core.contract import current as pointer
    from petrichor_core.contract import manifest
    from petrichor_pipeline.builder import publish

    _, embedder = served_snapshot
    data, corpus, home = copy_built(built_corpus, tmp_path)
    old = current(data)
    _, healthy = served_answers(data, embedder)
    edit_article(corpus)

    def fail(*args, **kwargs):
        raise OSError(code, f"{errno.errorcode[code]} injected")

    if target == "parquet":
        monkeypatch.setattr(publish, "write_parquet_atomic", fail)
    else:  # the module that writes the file, and only that file of it
        module, name = (manifest, manifest.MANIFEST_FILE) if target == "manifest" else (pointer, pointer.CURRENT_FILE)
        real_text = module.write_text_atomic
        monkeypatch.setattr(module, "write_text_atomic", lambda path, text: fail() if path.name == name else real_text(path, text))
    failed = run_cli_build(data, corpus, home)
    assert not failed["published"] and failed["failed_run"], failed
    assert current(data) == old
    assert served_answers(data, embedder) == (old, healthy)

    monkeypatch.undo()
    repaired = run_cli_build(data, corpus, home)
    assert repaired["_exit_code"] == 0 and repaired["published"], repaired
    assert current(data) != old
    assert_complete(data)
