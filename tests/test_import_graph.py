"""The import graph of our packages, read statically (every `import`, at module or function level, and
under `if TYPE_CHECKING:`: an annotation-only import still ties the two modules together).

No module may reach itself through imports, and imports run one way, down the layers:

    petrichor (CLI, evaluation)                 may import all three below
    petrichor_pipeline    petrichor_serving     the build and serving: neither imports the other
    petrichor_core                              what both stand on: imports none of the three above

Inside them: `petrichor_core.text` and the snapshot contract depend on nothing of ours but `text/` itself
and the version constants, `assets/` use `builder/` and never the reverse, serving never imports Dagster
(answering is serving's: `petrichor_serving.answer`; what both sides read is `petrichor_core.text`), and the
HTTP contract (the tool declaration, the request models, the endpoint table's machinery, the error mapping)
imports no agent module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("petrichor_core", "petrichor_pipeline", "petrichor_serving", "petrichor")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py"))}


def _imported(path: Path, module: str, is_package: bool, modules: set[str]) -> set[str]:
    """Every module name `path` imports, `if TYPE_CHECKING:` ones included; `from a import b` counts `a.b`
    when that is a module, else `a`."""
    names: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                names.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return names


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """Our modules and the modules of ours each imports (names resolved to existing modules)."""
    modules = _modules()
    out: dict[str, set[str]] = {}
    for name, path in modules.items():
        raw = _imported(path, name, path.name == "__init__.py", set(modules))
        out[name] = {n for n in raw if n in modules and n != name}
        out[name] |= {n for n in raw if n.split(".")[0] not in PACKAGES}  # third-party, for the Dagster rule
    return out


def _ours(graph: dict[str, set[str]], name: str) -> set[str]:
    return {n for n in graph[name] if n in graph}


def test_there_is_no_import_cycle(graph):
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(_ours(graph, node)):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _dagster(name: str) -> bool:
    return _under(name, "dagster") or name.startswith("dagster_")


def _edges(graph: dict[str, set[str]], source: str, target) -> dict[str, list[str]]:
    """Each module under `source` and the modules it imports that `target` picks, where there are any."""
    found = {name: sorted(n for n in graph[name] if target(n)) for name in graph if _under(name, source)}
    return {k: v for k, v in found.items() if v}


def test_core_imports_none_of_the_layers_above_nor_dagster(graph):
    """`petrichor_core` is beneath both sides: nothing of the build, of serving or of the CLI, and no Dagster
    (serving stands on it)."""
    above = ("petrichor_pipeline", "petrichor_serving", "petrichor")
    assert _edges(graph, "petrichor_core", lambda n: any(_under(n, pkg) for pkg in above) or _dagster(n)) == {}
    # the graph resolves edges into each package above (the CLI's) and third-party ones (the builder's Dagster)
    assert all(any(_under(n, pkg) for n in _ours(graph, "petrichor.cli")) for pkg in above)
    assert any(_dagster(n) for n in graph["petrichor_pipeline.builder.instance_sqlite"])


def test_text_and_the_contract_import_nothing_of_ours_but_text(graph):
    """Text imports only text; the contract's modules import text and each other. Both may read the version
    constants (`versions`, which imports nothing)."""
    leaf = "petrichor_core.versions"
    layers = {
        "petrichor_core.text": ("petrichor_core.text", leaf),
        "petrichor_core.contract": ("petrichor_core.text", "petrichor_core.contract", leaf),
    }
    bad = {
        name: sorted(n for n in _ours(graph, name) if not any(_under(n, ok) for ok in allowed))
        for layer, allowed in layers.items()
        for name in graph
        if _under(name, layer)
    }
    assert {k: v for k, v in bad.items() if v} == {}
    assert _ours(graph, leaf) == set()
    assert "petrichor_core.text.tokenize" in _ours(graph, "petrichor_core.contract.manifest")
    assert "petrichor_core.versions" in _ours(graph, "petrichor_core.text.chunking")


DAGSTER_LAYER = (
    "petrichor_pipeline.assets",
    "petrichor_pipeline.definitions",
    "petrichor_pipeline.jobs",
    "petrichor_pipeline.sensors",
    "petrichor_pipeline.checks",
    "petrichor_pipeline.snapshot_checks",
    "petrichor_pipeline.lint_checks",
    "petrichor_pipeline.resources",
    "petrichor_pipeline.runner",
    "petrichor_pipeline.executors",
    "petrichor_pipeline.instance",
    "petrichor_pipeline.partitions",
    "petrichor_pipeline.staleness",
)
"""The pipeline's Dagster layer: definitions, assets, checks and what runs them; the builder is beneath it."""


def test_the_builder_never_imports_the_dagster_layer(graph):
    assert all(name in graph for name in DAGSTER_LAYER)
    assert _edges(graph, "petrichor_pipeline.builder", lambda n: any(_under(n, layer) for layer in DAGSTER_LAYER)) == {}
    assert any(_under(n, "petrichor_pipeline.builder") for n in _ours(graph, "petrichor_pipeline.assets.chunks"))


def test_serving_never_imports_the_pipeline_nor_dagster(graph):
    """Serving stands on `petrichor_core` (the contract, text and the model protocols), never on the build."""
    assert _edges(graph, "petrichor_serving", lambda n: _under(n, "petrichor_pipeline") or _under(n, "petrichor") or _dagster(n)) == {}
    assert "petrichor_core.text.prose" in _ours(graph, "petrichor_serving.answer.answers")
    assert any(_under(n, "starlette") for n in graph["petrichor_serving.app"])


def test_the_pipeline_never_imports_serving(graph):
    """Answering questions is serving's alone, so no pipeline module reaches `petrichor_serving` (nor the CLI);
    what both sides share is `petrichor_core`."""
    assert _edges(graph, "petrichor_pipeline", lambda n: _under(n, "petrichor_serving") or _under(n, "petrichor")) == {}
    assert "petrichor_core.text.chunking" in _ours(graph, "petrichor_pipeline.builder.steps.chunks")
    assert "petrichor_core.text.prose" in _ours(graph, "petrichor_core.models.offline.pages")


HTTP_CONTRACT = ("petrichor_serving.toolspec", "petrichor_serving.schema", "petrichor_serving.endpoints", "petrichor_serving.errors")
"""Where the tools and endpoints are declared and errors mapped: the agent builds on these, never the reverse."""
AGENT_ENTRY_POINTS = {"petrichor_serving.agent.loop", "petrichor_serving.agent.tools"}
"""What the HTTP and MCP handlers may call to answer: the agent loop and the tool functions."""


def test_the_http_contract_imports_no_agent_module(graph):
    bad = {name: sorted(n for n in _ours(graph, name) if _under(n, "petrichor_serving.agent")) for name in HTTP_CONTRACT}
    assert {k: v for k, v in bad.items() if v} == {}
    handlers = ("petrichor_serving.app", "petrichor_serving.openai_api", "petrichor_serving.mcp_server")
    beyond = {
        name: sorted(n for n in _ours(graph, name) if _under(n, "petrichor_serving.agent") and n not in AGENT_ENTRY_POINTS) for name in handlers
    }
    assert {k: v for k, v in beyond.items() if v} == {}
