"""Shared by the tests of this package: a real `petrichor serve` over the built bundled corpus, and an
in-process client with two tenants' keys."""

from __future__ import annotations

import hashlib
import json

import pytest

from petrichor_serving.auth import KeyStore
from tests.conftest import EMBED_CACHE
from tests.serving.live import LiveServer, petrichor_serve, serving_env
from tests.serving.test_api import _client


@pytest.fixture(scope="session")
def live_server(built_corpus, tmp_path_factory) -> LiveServer:
    env = serving_env(built_corpus.data_dir, built_corpus.corpus_dir, EMBED_CACHE, tmp_path_factory.mktemp("live"))
    with petrichor_serve(env) as server:
        yield server


@pytest.fixture()
def keyed(built_corpus, monkeypatch, tmp_path):
    """A client of the built corpus with two tenants' keys: acme-key and globex-key."""
    key_file = tmp_path / "keys.json"
    entries = [
        {"sha256": hashlib.sha256(b"acme-key").hexdigest(), "tenant": "acme", "kbs": "*"},
        {"sha256": hashlib.sha256(b"globex-key").hexdigest(), "tenant": "globex", "kbs": "*"},
    ]
    key_file.write_text(json.dumps({"keys": entries}), encoding="utf-8")
    with _client(built_corpus, monkeypatch, KeyStore.load(key_file)) as c:
        yield c
