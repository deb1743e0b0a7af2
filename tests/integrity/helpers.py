"""Shared pieces of the integrity and fault tests: a private copy of a built corpus and its answers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from petrichor_core.contract.current import read_current, verify_snapshot
from petrichor_core.contract.manifest import MANIFEST_FILE, IntegrityError
from petrichor_serving.snapshot import load_snapshot
from tests.conftest import BuiltCorpus

QUERIES = ["How are API keys stored in the key file?", "snapshot CURRENT retention"]
QUESTION = "How does serving pick up a new snapshot?"
VOLATILE = {"trace_id", "timingsMs", "elapsed_ms", "loaded_at", "load_seconds"}
"""Fields that differ between two identical requests (timings, ids)."""


def copy_built(built: BuiltCorpus, root: Path) -> tuple[Path, Path, Path]:
    """A writable copy of the session's built corpus: (data dir, corpus dir, dagster home)."""
    data, corpus, home = root / "data", root / "corpus", root / "home"
    shutil.copytree(built.data_dir, data)
    shutil.copytree(built.corpus_dir, corpus)
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    return data, corpus, home


def current(data: Path) -> str:
    version = read_current(data / "snapshots")
    assert version is not None
    return version


def damage_file(path: Path, damage: str) -> None:
    """Flip one byte in the middle of `path` (`damage` "flip") or delete it ("missing")."""
    if damage == "flip":
        raw = bytearray(path.read_bytes())
        raw[len(raw) // 2] ^= 0x01
        path.write_bytes(bytes(raw))
    else:
        path.unlink()


def assert_refused_when_damaged(data: Path, version: str, file: str, damage: str, embedder: Any) -> None:
    """Flip one byte of a snapshot file (`damage` "flip") or delete it ("missing"): loading and verifying the
    snapshot both refuse it, naming the file."""
    damage_file(data / "snapshots" / version / file, damage)
    with pytest.raises(IntegrityError, match=file):
        load_snapshot(data, version, embed_fingerprint=embedder.fingerprint)
    with pytest.raises(IntegrityError, match=file):
        verify_snapshot(data, version)


def edit_article(corpus: Path, rel: str = "petrichor-en/overview.md", note: str = "An addendum for the fault tests.") -> None:
    p = corpus / rel
    p.write_text(p.read_text(encoding="utf-8") + f"\n\n## Addendum\n\n{note}\n", encoding="utf-8")


def client_for(data: Path, embedder: Any, *, chat: Any = None) -> TestClient:
    """The HTTP app over `data` (no watcher) with the given embedder and, by default, the offline answerer."""
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_answer_model
    from petrichor_serving.app import create_app
    from petrichor_serving.services import Services, ServingSettings
    from petrichor_serving.snapshot import SnapshotStore

    if chat is None:
        with pytest.MonkeyPatch.context() as mp:
            for name in ("PETRICHOR_LLM_BASE_URL", "PETRICHOR_LLM_PROVIDER"):
                mp.delenv(name, raising=False)
            chat = make_answer_model(load_settings())
    store = SnapshotStore(data, embed_fingerprint=embedder.fingerprint)
    services = Services(settings=ServingSettings(data_dir=data), store=store, keys=None, chat=chat, embedder=embedder)
    return TestClient(create_app(services, watch=False))


def _stable(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _stable(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [_stable(v) for v in doc]
    return doc


def answers(client: TestClient) -> dict[str, Any]:
    """What a user sees for a fixed set of searches and one cited answer, without timings and ids."""
    out: dict[str, Any] = {}
    for q in QUERIES:
        res = client.post("/api/knowledge/search", json={"query": q, "limit": 5})
        assert res.status_code == 200, res.text
        out[q] = _stable(res.json())
    res = client.post("/api/assistant/chat", json={"question": QUESTION})
    assert res.status_code == 200, res.text
    out[QUESTION] = _stable(res.json())
    return out


def served_answers(data: Path, embedder: Any) -> tuple[str, dict[str, Any]]:
    """(the version served, its answers) for a fresh server over `data`."""
    with client_for(data, embedder) as client:
        health = client.get("/healthz").json()
        return health["snapshot_version"], answers(client)


def assert_complete(data: Path) -> None:
    """CURRENT verifies as serving would check it, and every table the manifest lists has rows where expected."""
    version = current(data)
    verify_snapshot(data, version)
    manifest = json.loads((data / "snapshots" / version / MANIFEST_FILE).read_text(encoding="utf-8"))
    for name in ("articles", "chunks", "questions", "tree_nodes", "wiki_pages", "lexical_index"):
        assert manifest["tables"][name]["rows"] > 0, name
