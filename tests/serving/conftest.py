"""A real `petrichor serve` over the built bundled corpus, shared by the client tests of this package."""

from __future__ import annotations

import pytest

from tests.conftest import EMBED_CACHE
from tests.serving.live import LiveServer, petrichor_serve, serving_env


@pytest.fixture(scope="session")
def live_server(built_corpus, tmp_path_factory) -> LiveServer:
    env = serving_env(built_corpus.data_dir, built_corpus.corpus_dir, EMBED_CACHE, tmp_path_factory.mktemp("live"))
    with petrichor_serve(env) as server:
        yield server
