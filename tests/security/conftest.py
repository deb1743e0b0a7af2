"""One two-tenant corpus per test session, built once, and one app over it with a key per principal; and the
past pair: a smaller corpus built, edited and built again, served with the same keys."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import BuiltCorpus, isolated_env, run_cli_build
from tests.security.corpus import NOW, NOW_KBS, PAST, PAST_KBS, make_tenant_corpus, write_corpus

KEYS = {
    "alpha-key": {"tenant": "alpha", "kbs": "*"},
    "beta-key": {"tenant": "beta", "kbs": "*"},
    "alpha-notes-key": {"tenant": "alpha", "kbs": ["alpha-notes"]},
}


@pytest.fixture(scope="session")
def tenant_build(tmp_path_factory: pytest.TempPathFactory) -> BuiltCorpus:
    root = tmp_path_factory.mktemp("tenants")
    corpus = make_tenant_corpus(root)
    data_dir, home = root / "data", root / "dagster_home"
    summary = run_cli_build(data_dir, corpus, home)
    assert summary["_exit_code"] == 0 and not summary["errors"], summary
    return BuiltCorpus(data_dir=data_dir, corpus_dir=corpus, dagster_home=home, summary=summary)


def _serve(build: BuiltCorpus, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """A client of the app over `build`'s data folder with the key file of `KEYS`."""
    from starlette.testclient import TestClient

    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_answer_model, make_embedder
    from petrichor_serving.app import create_app
    from petrichor_serving.auth import KeyStore
    from petrichor_serving.services import Services, ServingSettings
    from petrichor_serving.snapshot import SnapshotStore

    key_file: Path = tmp_path_factory.mktemp("tenant-keys") / "keys.json"
    entries = [{"sha256": hashlib.sha256(key.encode()).hexdigest(), "name": key, **grant} for key, grant in KEYS.items()]
    key_file.write_text(json.dumps({"keys": entries}), encoding="utf-8")
    mp = pytest.MonkeyPatch()
    try:
        isolated_env(mp, build.data_dir, build.corpus_dir, build.dagster_home)
        settings = load_settings()
        embedder = make_embedder(settings)
        store = SnapshotStore(settings.data_dir, embed_fingerprint=embedder.fingerprint)
        services = Services(
            settings=ServingSettings(data_dir=settings.data_dir),
            store=store,
            keys=KeyStore.load(key_file),
            chat=make_answer_model(settings),
            embedder=embedder,
        )
        with TestClient(create_app(services, watch=False)) as client:
            yield client
    finally:
        mp.undo()


@pytest.fixture(scope="session")
def tenant_app(tenant_build: BuiltCorpus, tmp_path_factory: pytest.TempPathFactory):
    """A client of the app over the two-tenant snapshot with the key file of `KEYS`, shared by the session."""
    yield from _serve(tenant_build, tmp_path_factory)


@dataclass(frozen=True)
class PastBuild:
    build: BuiltCorpus
    past: str
    """The first build's snapshot version (the corpus as `PAST`)."""
    now: str
    """The second build's, current (the corpus as `NOW`)."""


@pytest.fixture(scope="session")
def past_build(tmp_path_factory: pytest.TempPathFactory) -> PastBuild:
    """The past pair's two builds on one data folder: `PAST`, then the edits to `NOW`."""
    root = tmp_path_factory.mktemp("past")
    corpus, data_dir, home = root / "corpus", root / "data", root / "dagster_home"
    first = run_cli_build(data_dir, write_corpus(corpus, PAST_KBS, PAST), home)
    assert first["_exit_code"] == 0 and not first["errors"], first
    second = run_cli_build(data_dir, write_corpus(corpus, NOW_KBS, NOW), home)
    assert second["_exit_code"] == 0 and not second["errors"], second
    assert first["snapshot_version"] != second["snapshot_version"]
    build = BuiltCorpus(data_dir=data_dir, corpus_dir=corpus, dagster_home=home, summary=second)
    return PastBuild(build, first["snapshot_version"], second["snapshot_version"])


@pytest.fixture(scope="session")
def past_app(past_build: PastBuild, tmp_path_factory: pytest.TempPathFactory):
    """A client of the app over the past pair, serving the second build, with the key file of `KEYS`."""
    yield from _serve(past_build.build, tmp_path_factory)
