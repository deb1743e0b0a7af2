"""`/openapi.json` says what `/mcp` and the citation endpoints do: schemathesis's CLI with `--checks all` (every
check, none exempted) against the app served by uvicorn on 127.0.0.1 with a key file, as an operator runs it.

`/mcp` answers in the MCP transport's own content types (an event stream, an empty 202, JSON-RPC errors) and
refuses a body that is not one JSON-RPC message; a citation's offsets that name no text answer 404, never a
400 for a request the document allows. The citation's article and version are fixed to a stored record so
that the generated offsets meet a real text. Bounded and derandomised: the coverage and fuzzing phases,
`EXAMPLES` per operation, one seed (the stateful phase only reopens `GET /mcp`'s endless stream).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from petrichor_core.contract.schemas import SCHEMAS
from petrichor_core.text.normalize import article_version
from petrichor_pipeline.builder.history import record_articles
from petrichor_serving.app import create_app
from petrichor_serving.auth import KeyStore
from petrichor_serving.services import Services, ServingSettings
from petrichor_serving.snapshot import SnapshotStore
from tests.serving.live import app_in_thread

KEY = "conformance-key"
EXAMPLES = 15
OPERATIONS = ("/mcp", "/api/citations/resolve", "/api/public/citations/resolve")


def _record(data: Path) -> tuple[str, str]:
    """One article version in the history store, as a published build records it: (article_id, version)."""
    title, content = "Tides", "# Tides\n\nThe tide rises twice a day.\n"
    article = {f.name: None for f in SCHEMAS["articles"]} | {
        "article_id": "tides",
        "kb_id": "kb",
        "path": "kb/tides.md",
        "title": title,
        "tenant": "default",
        "visibility": "public",
        "password_protected": False,
        "article_version": article_version(title, content),
        "content": content,
    }
    chunk = {f.name: None for f in SCHEMAS["chunks"]} | {"article_id": "tides", "start": 0, "end": len(content) - 1, "heading_path": [title]}
    record_articles(data, pa.Table.from_pylist([article], schema=SCHEMAS["articles"]), pa.Table.from_pylist([chunk], schema=SCHEMAS["chunks"]))
    return article["article_id"], article["article_version"]


@pytest.fixture()
def served(tmp_path: Path):
    """The app over a data folder holding one history record and no snapshot, keyed, on 127.0.0.1."""
    data = tmp_path / "data"
    cited = _record(data)
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"sha256": hashlib.sha256(KEY.encode()).hexdigest(), "tenant": "default", "kbs": "*"}]}))
    services = Services(settings=ServingSettings(data_dir=data), store=SnapshotStore(data), keys=KeyStore.load(keys), chat=None, embedder=None)
    with app_in_thread(create_app(services, watch=False), timeout_s=30) as url:
        yield url, cited


def test_schemathesis_checks_all_pass_on_mcp_and_citations(served, tmp_path: Path) -> None:
    url, (article_id, version) = served
    config = tmp_path / "schemathesis.toml"
    config.write_text(f'[parameters]\n"query.article_id" = "{article_id}"\n"query.article_version" = "{version}"\n')
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file",
        str(config),
        "run",
        f"{url}/openapi.json",
        "--checks",
        "all",
        "--header",
        f"Authorization: Bearer {KEY}",
        "--max-examples",
        str(EXAMPLES),
        "--seed",
        "1",
        "--workers",
        "1",
        "--request-timeout",
        "2",
        "--phases",
        "coverage,fuzzing",
        "--no-color",
        *(arg for path in OPERATIONS for arg in ("--include-path", path)),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert f"Selected: {len(OPERATIONS) + 1}/" in run.stdout  # GET and POST /mcp, both resolves
