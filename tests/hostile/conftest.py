"""One hostile corpus per test session, built once with the offline model and the shared embed cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import BuiltCorpus, isolated_env, run_cli_build
from tests.hostile.corpus import make_hostile_corpus


@pytest.fixture(scope="session")
def hostile_build(tmp_path_factory: pytest.TempPathFactory) -> BuiltCorpus:
    root = tmp_path_factory.mktemp("hostile")
    corpus = make_hostile_corpus(root)
    data_dir, home = root / "data", root / "dagster_home"
    summary = run_cli_build(data_dir, corpus, home)
    return BuiltCorpus(data_dir=data_dir, corpus_dir=corpus, dagster_home=home, summary=summary)


@pytest.fixture()
def hostile_app(hostile_build: BuiltCorpus, monkeypatch: pytest.MonkeyPatch):
    """The HTTP app over the hostile snapshot, in local mode (no key file)."""
    from starlette.testclient import TestClient

    from petrichor_pipeline.config import load_settings
    from petrichor_pipeline.models.providers import make_answer_model, make_embedder
    from petrichor_serving.app import create_app
    from petrichor_serving.services import Services, ServingSettings
    from petrichor_serving.snapshot import SnapshotStore

    isolated_env(monkeypatch, hostile_build.data_dir, hostile_build.corpus_dir, hostile_build.dagster_home)
    settings = load_settings()
    embedder = make_embedder(settings)
    store = SnapshotStore(settings.data_dir, embed_fingerprint=embedder.fingerprint)
    services = Services(settings=ServingSettings(data_dir=settings.data_dir), store=store, keys=None, chat=make_answer_model(settings), embedder=embedder)
    app = create_app(services, watch=False)
    with TestClient(app) as client:
        yield client


def snapshot_dir(build: BuiltCorpus) -> Path:
    version = build.summary["snapshot_version"]
    assert version, build.summary
    return build.data_dir / "snapshots" / version
