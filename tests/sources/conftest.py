from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    return root
