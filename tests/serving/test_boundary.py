"""Serving's hard boundary: it imports only the contract, the text helpers and the model protocols.

Answering is serving's own (`petrichor_serving.answer`): the build never answers, so nothing of the
offline model (`petrichor_pipeline.models.offline`) is serving's; what both sides read (sentences,
stopwords, tokenizers, Markdown) is `petrichor_pipeline.text`.

Checked twice: statically (every `petrichor_pipeline` import under `petrichor_serving/`), and in a fresh
interpreter that imports the app, serves one offline answer, and then looks at what got loaded.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ALLOWED = ("petrichor_pipeline.contract", "petrichor_pipeline.text", "petrichor_pipeline.models.protocols", "petrichor_pipeline.versions")
FORBIDDEN = (
    "dagster",
    "petrichor_pipeline.build",
    "petrichor_pipeline.knowledge",
    "petrichor_pipeline.assets",
    "petrichor_pipeline.definitions",
    "petrichor_pipeline.config",
    "petrichor_pipeline.models.providers",
    "petrichor_pipeline.models.offline",
    "petrichor_pipeline.models.prompts",
)


def _allowed(module: str) -> bool:
    return any(module == root or module.startswith(root + ".") for root in ALLOWED)


def _pipeline_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] if node.module != "petrichor_pipeline" else [f"petrichor_pipeline.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n for n in names if n.split(".")[0] == "petrichor_pipeline"]
    return found


def test_serving_source_imports_only_the_allowed_pipeline_modules():
    files = sorted((REPO / "petrichor_serving").rglob("*.py"))
    assert files
    bad = {str(f.relative_to(REPO)): m for f in files for m in _pipeline_imports(f) if not _allowed(m)}
    assert not bad, bad


_PROBE = """
import json, sys
from pathlib import Path

FORBIDDEN = {forbidden!r}

def loaded():
    return sorted(m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))

import petrichor_serving.app
after_import = loaded()

from starlette.testclient import TestClient
from petrichor_serving.app import create_app
from petrichor_serving.services import ServingSettings, build_services

services = build_services(ServingSettings(data_dir=Path({data_dir!r})), chat=None, embedder=None)
with TestClient(create_app(services, watch=False)) as client:
    reply = client.post("/api/assistant/chat", json={{"question": "What is the default RRF constant?"}})
print(json.dumps({{"after_import": after_import, "after_answer": loaded(), "status": reply.status_code, "answer": reply.json()}}))
"""


@pytest.mark.slow
def test_a_fresh_server_answers_offline_without_loading_build_code(built_corpus):
    code = _PROBE.format(forbidden=FORBIDDEN, data_dir=str(built_corpus.data_dir))
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["after_import"] == [], report["after_import"]
    assert report["status"] == 200 and report["answer"]["citations"], report["answer"]
    assert report["after_answer"] == [], report["after_answer"]
