"""`petrichor_core.versions` is the one place a version constant is defined, each with a docstring saying
what bumping it rebuilds, and it imports nothing, so every layer may read it."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VERSIONS = REPO / "petrichor_core" / "versions.py"
PACKAGES = ("petrichor_core", "petrichor_pipeline", "petrichor_serving", "petrichor")


def _assigned_names(node: ast.stmt) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def test_no_module_but_versions_defines_a_version_constant():
    defined = {
        f"{path.relative_to(REPO)}:{node.lineno} {name}"
        for pkg in PACKAGES
        for path in sorted((REPO / pkg).rglob("*.py"))
        if path != VERSIONS
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for name in _assigned_names(node)
        if name.isupper() and name.endswith("_VERSION")
    }
    assert defined == set()


def test_every_version_has_a_docstring_and_the_module_imports_nothing():
    body = ast.parse(VERSIONS.read_text(encoding="utf-8")).body
    assert not [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = []
    for node, after in zip(body, body[1:] + [None]):
        for name in _assigned_names(node):
            names.append(name)
            doc = after.value.value if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) else None
            assert isinstance(doc, str) and doc.strip(), f"{name} has no docstring"
    assert len(names) == len(set(names)) >= 11
    assert all(name.endswith("_VERSION") for name in names)
