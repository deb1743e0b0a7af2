"""Serving's hard boundary: nothing of the build (`petrichor_pipeline`), and of `petrichor_core` only the
contract, the text helpers, the model protocols and the version constants.

Answering is serving's own (`petrichor_serving.answer`): the build never answers, so nothing of the
offline model (`petrichor_core.models.offline`) is serving's; what both sides read (sentences,
stopwords, tokenizers, Markdown) is `petrichor_core.text`.

Checked twice: statically (every `petrichor_pipeline` and `petrichor_core` import under `petrichor_serving/`),
and in a fresh interpreter that imports the app, serves one offline answer, and then looks at what got loaded.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ALLOWED = ("petrichor_core.contract", "petrichor_core.text", "petrichor_core.models.protocols", "petrichor_core.versions")
"""All serving may import from below it; nothing at all of `petrichor_pipeline`."""
FORBIDDEN = (
    "dagster",
    "petrichor_pipeline",
    "petrichor_core.config",
    "petrichor_core.object_store",
    "petrichor_core.models.providers",
    "petrichor_core.models.offline",
    "petrichor_core.models.prompts",
)
SHARED = ("petrichor_core", "petrichor_pipeline")


def _allowed(module: str) -> bool:
    return any(module == root or module.startswith(root + ".") for root in ALLOWED)


def _shared_imports(path: Path) -> list[str]:
    """The `petrichor_core` and `petrichor_pipeline` modules `path` imports (`from pkg import mod` as `pkg.mod`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] if node.module not in SHARED else [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n for n in names if n.split(".")[0] in SHARED]
    return found


def test_serving_source_imports_only_the_allowed_core_modules():
    files = sorted((REPO / "petrichor_serving").rglob("*.py"))
    assert files
    imports = {str(f.relative_to(REPO)): _shared_imports(f) for f in files}
    bad = {f: m for f, found in imports.items() for m in found if not _allowed(m)}
    assert not bad, bad
    assert "petrichor_core.text.prose" in imports["petrichor_serving/answer/answers.py"]


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
