"""Headless Chromium from Debian's `chromium` package, driven by Playwright (no browser download, ever),
and the app served by uvicorn on a free 127.0.0.1 port.

Tests here skip with a clear message where `/usr/bin/chromium` or the `playwright` package is missing.
Screenshots go under pytest's tmp path, or into `docs/img/` when PETRICHOR_REFRESH_SCREENSHOTS=1.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO, isolated_env
from tests.serving.live import app_in_thread

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = REPO / "docs" / "img"
GLOBEX_KEY = "globex-key"


def screenshot_path(tmp_path: Path, name: str) -> Path:
    """Where a test saves its screenshot: the README's image when asked to refresh, else a test artifact."""
    if os.environ.get("PETRICHOR_REFRESH_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS / name
    return tmp_path / name


@pytest.fixture(scope="module")
def browser():
    """Per module, so a session fixture (the corpus build, which runs Dagster) is never set up inside
    Playwright's running event loop."""
    if not CHROMIUM.exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("no browser driver: the playwright package is not installed (pip install -r requirements-test.lock)")
    with sync_playwright() as p:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []  # Chromium refuses its sandbox as root
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=args)
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    pg = context.new_page()
    pg.set_default_timeout(60_000)  # an answer on two shared cores can take a while
    yield pg
    context.close()


@dataclass(frozen=True)
class Served:
    url: str
    articles: dict[str, dict]
    """article_id -> the snapshot's article row"""


@pytest.fixture(scope="session")
def served(built_corpus, tmp_path_factory):
    """The app over the bundled corpus with a key file (the `globex-key` reads tenant globex), on uvicorn."""
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_answer_model, make_embedder
    from petrichor_serving.app import create_app
    from petrichor_serving.services import ServingSettings, build_services

    key_file = tmp_path_factory.mktemp("keys") / "keys.json"
    entry = {"sha256": hashlib.sha256(GLOBEX_KEY.encode()).hexdigest(), "tenant": "globex", "kbs": "*", "name": "web"}
    key_file.write_text(json.dumps({"keys": [entry]}), encoding="utf-8")
    mp = pytest.MonkeyPatch()
    isolated_env(mp, built_corpus.data_dir, built_corpus.corpus_dir, built_corpus.dagster_home)
    try:
        settings = load_settings()
        services = build_services(
            ServingSettings(data_dir=settings.data_dir, api_keys_file=key_file), chat=make_answer_model(settings), embedder=make_embedder(settings)
        )
    finally:
        mp.undo()
    with app_in_thread(create_app(services, watch=False)) as url:
        yield Served(url=url, articles=dict(services.store.current.articles))
