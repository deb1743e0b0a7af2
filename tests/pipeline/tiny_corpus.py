"""A three-article corpus that builds in seconds (embedding off), and what a snapshot holds of it."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import run_cli_build
from tests.pipeline.snapshot_io import current_version, snapshot_rows
from tests.sources.helpers import write

ARTICLES = {
    "kb/ports.md": "# Ports\n\nThe service listens on port 8000 and answers health checks.\n",
    "kb/snapshots.md": "# Snapshots\n\nFive snapshots are kept; older ones are collected.\n",
    "kb/keys.md": "# Keys\n\nEvery request carries an API key scoped to one tenant.\n",
}
FAST = {"PETRICHOR_EMBED": "off"}


def write_corpus(root: Path, articles: dict[str, str | bytes] = ARTICLES) -> Path:
    for relpath, text in articles.items():
        write(root, relpath, text)
    return root


def build(data: Path, corpus: Path, home: Path, *extra: str, env: dict[str, str] | None = None) -> dict:
    return run_cli_build(data, corpus, home, *extra, env={**FAST, **(env or {})})


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def published_articles(data: Path, version: str | None = None) -> dict[str, str]:
    """`{path: article_version}` of a snapshot (CURRENT's by default)."""
    return {r["path"]: r["article_version"] for r in snapshot_rows(data, "articles", version or current_version(data))}


def corpus_articles(data: Path, corpus: Path) -> dict[str, str]:
    """`{path: article_version}` as a scan of `corpus` finds it now."""
    from petrichor_pipeline.resources import build_context

    return {a.path: a.article_version for a in build_context(str(data), str(corpus)).scan().articles}
