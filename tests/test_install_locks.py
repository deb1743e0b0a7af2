"""The two locks: the runtime alone for building and asking, the test toolchain on top of it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if m := re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", line.strip()):
            pins[m[1].lower().replace("_", "-")] = m[2]
    return pins


def _name(requirement: str) -> tuple[str, str]:
    name, _, version = requirement.partition("==")
    return re.sub(r"\[.*\]", "", name).lower().replace("_", "-"), version


def test_runtime_lock_pins_every_dependency_and_no_test_tool() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = _pins(REPO / "requirements.lock")
    for name, version in map(_name, project["dependencies"]):
        assert runtime.get(name) == version, name
    for name, _ in map(_name, project["optional-dependencies"]["test"]):
        assert name not in runtime, f"{name} is a test tool: it belongs in requirements-test.lock"


def test_test_lock_adds_the_toolchain_to_the_runtime_lock() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    text = (REPO / "requirements-test.lock").read_text(encoding="utf-8")
    assert "-r requirements.lock" in text.splitlines()
    test, runtime = _pins(REPO / "requirements-test.lock"), _pins(REPO / "requirements.lock")
    assert not set(test) & set(runtime), "a package pinned in both locks can drift apart"
    for name, version in map(_name, project["optional-dependencies"]["test"]):
        assert test.get(name) == version, name


BLOCK_TEST_TOOLS = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError("test tool imported at run time: " + name)
sys.meta_path.insert(0, Block())
import petrichor.cli, petrichor_pipeline.definitions, petrichor_serving.app, petrichor_serving.mcp_server
import petrichor.evaluation.cli
"""


def test_the_product_imports_without_the_test_toolchain() -> None:
    """What the first README command installs is enough for every entry point to import."""
    blocked = {"pytest", "hypothesis", "schemathesis", "moto", "playwright", "xdist"}
    done = subprocess.run([sys.executable, "-c", BLOCK_TEST_TOOLS.format(blocked=blocked)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_collect_only_prints_the_total() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-n", "0", "tests/test_versions.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert re.search(r"\d+ tests? collected", done.stdout), done.stdout[-500:]


EXTRAS = ("postgres", "celery", "k8s")


def test_the_extras_pair_with_the_pinned_dagster_and_the_test_lock_holds_them() -> None:
    """Dagster's integration libraries are released as 0.(16+minor).patch beside dagster 1.minor.patch: each
    extra pins the one paired with the runtime lock's dagster (and its core libraries the same release), so
    `pip install '.[postgres]'` (celery, k8s) installs beside the lock; the test lock holds every extra's
    packages for tests/distributed."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime, test = _pins(REPO / "requirements.lock"), _pins(REPO / "requirements-test.lock")
    major, minor, patch = runtime["dagster"].split(".")
    assert major == "1"
    for core in ("dagster-graphql", "dagster-pipes", "dagster-shared", "dagster-webserver"):
        assert runtime[core] == runtime["dagster"], core
    for extra in EXTRAS:
        for name, version in map(_name, project["optional-dependencies"][extra]):
            if name.startswith("dagster-"):
                assert version == f"0.{16 + int(minor)}.{patch}", f"{name}=={version} does not pair with dagster=={runtime['dagster']}"
            assert test.get(name) == version, f"{extra}: {name} is not pinned at {version} in requirements-test.lock"
