"""`petrichor ask` and `petrichor search` take input as the HTTP API does: the same limits and the same one-line
error (a usage error, exit 2, never a traceback), and one answer printed once."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from starlette.testclient import TestClient

from petrichor.cli import main
from petrichor_serving.app import create_app
from petrichor_serving.services import ServingSettings, build_services
from petrichor_serving.toolspec import MAX_QUESTION_CHARS
from tests.conftest import isolated_env
from tests.pipeline.tiny_corpus import build, write_corpus

REFUSED = ["", "   \t ", "x" * (MAX_QUESTION_CHARS + 1)]
COMMANDS = {"ask": ("/api/assistant/chat", "question"), "search": ("/api/knowledge/search", "query")}


@pytest.fixture(scope="module")
def http(tmp_path_factory) -> TestClient:
    services = build_services(ServingSettings(data_dir=tmp_path_factory.mktemp("no-snapshot")), chat=None, embedder=None)
    return TestClient(create_app(services))


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("text", REFUSED, ids=["empty", "whitespace", "too-long"])
def test_refused_input_is_the_http_error_as_a_usage_error(command, text, http, tmp_path, monkeypatch, capsys):
    isolated_env(monkeypatch, tmp_path / "data", tmp_path / "corpus", tmp_path / "home")  # no snapshot: refused first
    with pytest.raises(SystemExit) as exit_info:
        main([command, text])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    path, field = COMMANDS[command]
    reply = http.post(path, json={field: text})
    assert reply.status_code == 400
    assert err.splitlines()[-1] == f"petrichor {command}: error: {reply.json()['error']}"
    assert "Traceback" not in err and len(err) < 500  # the input is never echoed back


@pytest.mark.slow
def test_a_question_asked_again_and_again_is_answered_once(tmp_path, monkeypatch):
    corpus = write_corpus(tmp_path / "corpus")
    data, home = tmp_path / "data", tmp_path / "home"
    assert build(data, corpus, home)["_exit_code"] == 0
    isolated_env(monkeypatch, data, corpus, home)
    monkeypatch.setenv("PETRICHOR_EMBED", "off")

    def ask(question: str) -> dict:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["ask", "--json", question]) == 0
        return json.loads(buf.getvalue())

    once = ask("Which port does the service listen on?")
    assert "port 8000" in once["answer"]
    again = ask(" ".join(["Which port does the service listen on?"] * 5 + ["which port does the  service listen on?"]))
    assert again["answer"] == once["answer"] and len(again["citations"]) == len(once["citations"])
