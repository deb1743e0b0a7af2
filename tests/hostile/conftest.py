"""One hostile corpus per test session, built once with the offline model and the shared embed cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import BuiltCorpus, isolated_env, run_cli_build
from tests.hostile.corpus import make_hostile_corpus, unreadable_even_for_root


@pytest.fixture(scope="session")
def hostile_build(tmp_path_factory: pytest.TempPathFactory) -> BuiltCorpus:
    root = tmp_path_factory.mktemp("hostile")
    corpus = make_hostile_corpus(root)
    data_dir, home = root / "data", root / "dagster_home"
    with unreadable_even_for_root(corpus):
        summary = run_cli_build(data_dir, corpus, home)
    return BuiltCorpus(data_dir=data_dir, corpus_dir=corpus, dagster_home=home, summary=summary)


FUZZ_KEY = "hostile-fuzz-key"


def _client(build: BuiltCorpus, monkeypatch: pytest.MonkeyPatch, keys=None):
    from starlette.testclient import TestClient

    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_answer_model, make_embedder
    from petrichor_serving.app import create_app
    from petrichor_serving.services import Services, ServingSettings
    from petrichor_serving.snapshot import SnapshotStore

    isolated_env(monkeypatch, build.data_dir, build.corpus_dir, build.dagster_home)
    settings = load_settings()
    embedder = make_embedder(settings)
    store = SnapshotStore(settings.data_dir, embed_fingerprint=embedder.fingerprint)
    services = Services(
        settings=ServingSettings(data_dir=settings.data_dir), store=store, keys=keys, chat=make_answer_model(settings), embedder=embedder
    )
    return TestClient(create_app(services, watch=False))


@pytest.fixture()
def hostile_app(hostile_build: BuiltCorpus, monkeypatch: pytest.MonkeyPatch):
    """The HTTP app over the hostile snapshot, in local mode (no key file)."""
    with _client(hostile_build, monkeypatch) as client:
        yield client


@pytest.fixture()
def hostile_keyed_app(hostile_build: BuiltCorpus, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The same app with a key file holding `FUZZ_KEY` (every knowledge base of the default tenant)."""
    import hashlib
    import json

    from petrichor_serving.auth import KeyStore

    key_file = tmp_path / "keys.json"
    key_file.write_text(json.dumps({"keys": [{"sha256": hashlib.sha256(FUZZ_KEY.encode()).hexdigest(), "tenant": "default", "kbs": "*"}]}))
    with _client(hostile_build, monkeypatch, KeyStore.load(key_file)) as client:
        yield client


def snapshot_dir(build: BuiltCorpus) -> Path:
    version = build.summary["snapshot_version"]
    assert version, build.summary
    return build.data_dir / "snapshots" / version
