"""Every environment variable the settings read is in the README's configuration table."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from petrichor_core.config import load_settings

README = Path(__file__).resolve().parent.parent / "README.md"


class _Recording(dict):
    """The environment, remembering every name looked up."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


def documented() -> set[str]:
    """The names in the first column of the configuration table; `_MODEL` after `PETRICHOR_LLM_BASE_URL`
    stands for `PETRICHOR_LLM_MODEL`, and `PETRICHOR_EMBED_…` in a row's meaning for the same suffixes."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for row in section.splitlines():
        cells = row.split("|")
        if len(cells) < 4 or not cells[1].strip().startswith("`PETRICHOR_"):
            continue
        first = re.findall(r"`(PETRICHOR_[A-Z_]+|_[A-Z_]+)`", cells[1])
        base = re.match(r"(PETRICHOR_[A-Z]+)_", first[0])
        full = [n if n.startswith("PETRICHOR_") else f"{base.group(1)}{n}" for n in first] if base else first
        names.update(full)
        for other in re.findall(r"`(PETRICHOR_[A-Z]+)_…`", cells[3]):
            names.update(other + n[len(base.group(1)) :] for n in full if base)
    return names


def test_every_setting_read_is_documented(monkeypatch: pytest.MonkeyPatch):
    env = _Recording({k: v for k, v in os.environ.items() if not k.startswith("PETRICHOR_")})
    monkeypatch.setattr(os, "environ", env)
    load_settings()
    read = {name for name in env.read if name.startswith("PETRICHOR_")}
    assert len(read) > 20  # the recording saw the settings being read
    assert read - documented() == set()
