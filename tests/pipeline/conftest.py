"""The tiny corpus built once per test process, for the tests that copy a finished build and break it."""

from __future__ import annotations

import pytest

from tests.pipeline.tiny_corpus import build, write_corpus


@pytest.fixture(scope="session")
def tiny_build(tmp_path_factory):
    """A folder holding `corpus`, `data` and `home` (the Dagster instance) of one build of the tiny corpus."""
    root = tmp_path_factory.mktemp("tiny-build")
    corpus = write_corpus(root / "corpus")
    summary = build(root / "data", corpus, root / "home")
    assert summary["_exit_code"] == 0 and summary["published"], summary
    return root
