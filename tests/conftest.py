"""Session fixtures: the bundled corpus is built once per test session and shared (embedding is slow)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))
"""Property tests draw the same examples on every run and machine, so a run's verdict depends on the code
alone; `HYPOTHESIS_PROFILE=default` searches at random (and keeps failures in `.hypothesis/`)."""

REPO = Path(__file__).resolve().parent.parent

TMPFS = Path("/dev/shm")
TMPFS_MIN_FREE = 4 << 30
"""Test folders go to tmpfs when it has this much room (Docker's default 64 MB does not)."""


MAX_WORKERS = 4
"""`-n auto` (addopts) runs this many test processes at most, one per core below that: most slow tests wait
on a build, a subprocess or a server, so two processes on two cores took the suite from 731 s to 376–429 s
(three on two cores: 497 s). Past four, every process's own session builds and loaded models cost more memory
than they save. `--dist loadfile` keeps a file's tests in one process, so its module fixtures (served apps,
builds) are set up once and its tests run in their written order."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


def pytest_configure(config: pytest.Config) -> None:
    """The shipped passage vectors go into the session's embedding cache (`tests/embed_seed.py`).

    Temporary folders on tmpfs when the machine has one with room: builds write Parquet, LanceDB versions and
    Dagster's SQLite event log (a commit per event), and on disk that I/O was a fifth of the slow tests' time
    (617 s → 485 s for pipeline, integrity and serving). One folder per run, named by its pid; folders of runs
    whose process is gone are removed first. `--basetemp` given on the command line wins."""
    from tests.embed_seed import install

    install(EMBED_CACHE)
    if config.option.basetemp is not None or not TMPFS.is_dir():
        return
    try:
        stat = os.statvfs(TMPFS)
    except OSError:
        return
    if stat.f_bavail * stat.f_frsize < TMPFS_MIN_FREE:
        return
    import shutil

    for old in TMPFS.glob("petrichor-pytest-*"):
        pid = old.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(old, ignore_errors=True)
    config.option.basetemp = str(TMPFS / f"petrichor-pytest-{os.getpid()}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A passing run frees its tmpfs folder (memory); a failing one keeps it to look into until the next run."""
    base = session.config.option.basetemp
    if exitstatus == 0 and base and str(base).startswith(str(TMPFS) + "/petrichor-pytest-"):
        import shutil

        shutil.rmtree(base, ignore_errors=True)


CORPUS = REPO / "data" / "corpus"
SHARED_EVAL = REPO.parent / "shared" / "eval"


@dataclass
class BuiltCorpus:
    data_dir: Path
    corpus_dir: Path
    dagster_home: Path
    summary: dict

    def copy_to(self, root: Path) -> tuple[Path, Path, Path]:
        """A private copy (corpus, data dir, Dagster home) under `root`: the instance records what was built from what."""
        corpus, data, home = root / "corpus", root / "data", (root / "home").resolve()
        shutil.copytree(self.corpus_dir, corpus)
        shutil.copytree(self.data_dir, data)
        shutil.copytree(self.dagster_home, home)
        return corpus, data, home


EMBED_CACHE = Path(os.environ.get("PETRICHOR_TEST_EMBED_CACHE") or REPO / ".pytest-embed-cache")
"""Vectors cached by content hash, shared by every build of the session (set PETRICHOR_TEST_EMBED_CACHE to move it)."""


def isolated_env(monkeypatch: pytest.MonkeyPatch, data_dir: Path, corpus_dir: Path, dagster_home: Path) -> None:
    monkeypatch.setenv("PETRICHOR_DATA", str(data_dir))
    monkeypatch.setenv("PETRICHOR_EMBED_CACHE", str(EMBED_CACHE))
    monkeypatch.setenv("PETRICHOR_CORPUS", str(corpus_dir))
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    for name in ("PETRICHOR_LLM_BASE_URL", "PETRICHOR_EMBED_BASE_URL", "PETRICHOR_VISION_BASE_URL", "PETRICHOR_API_KEYS"):
        monkeypatch.delenv(name, raising=False)


def run_cli_build(data_dir: Path, corpus_dir: Path, dagster_home: Path, *extra: str, env: dict[str, str] | None = None) -> dict:
    """`petrichor build --json` in-process with the given paths (and `env` on top); returns the summary."""
    import contextlib
    import io
    import json

    from petrichor.cli import main

    mp = pytest.MonkeyPatch()
    try:
        isolated_env(mp, data_dir, corpus_dir, dagster_home)
        for name, value in (env or {}).items():
            mp.setenv(name, value)
        dagster_home.mkdir(parents=True, exist_ok=True)
        (dagster_home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = main(["build", "--json", *extra])
        doc = json.loads(buf.getvalue())
        doc["_exit_code"] = code
        return doc
    finally:
        mp.undo()


@pytest.fixture(scope="session")
def built_corpus(tmp_path_factory: pytest.TempPathFactory) -> BuiltCorpus:
    root = tmp_path_factory.mktemp("bundled")
    data_dir, home = root / "data", root / "dagster_home"
    summary = run_cli_build(data_dir, CORPUS, home)
    assert summary["_exit_code"] == 0, summary
    return BuiltCorpus(data_dir=data_dir, corpus_dir=CORPUS, dagster_home=home, summary=summary)


@pytest.fixture(scope="session")
def served_snapshot(built_corpus: BuiltCorpus):
    """The built bundled corpus loaded as serving loads it."""
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_embedder
    from petrichor_serving.snapshot import SnapshotStore

    mp = pytest.MonkeyPatch()
    isolated_env(mp, built_corpus.data_dir, built_corpus.corpus_dir, built_corpus.dagster_home)
    try:
        embedder = make_embedder(load_settings())
        store = SnapshotStore(built_corpus.data_dir, embed_fingerprint=embedder.fingerprint)
        assert store.refresh()
        return store.current, embedder
    finally:
        mp.undo()


@pytest.fixture()
def fake():
    """A fake OpenAI-compatible server on 127.0.0.1 for one test, stopped after it."""
    from tests.models.fake_openai import FakeOpenAI

    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


_BROWSER_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Here rather than in `tests/browser/`: with `-n`, reports reach the main process, which never loads
    the conftest files of test folders."""
    if "browser" in report.keywords:
        _BROWSER_SECONDS[report.nodeid] = _BROWSER_SECONDS.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter) -> None:
    """One line CI can quote: how long the browser tests took (set-up, including the corpus build, counted)."""
    if _BROWSER_SECONDS:
        terminalreporter.write_line(f"browser tests: {len(_BROWSER_SECONDS)} in {sum(_BROWSER_SECONDS.values()):.1f}s")
