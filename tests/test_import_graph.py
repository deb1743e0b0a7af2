"""The import graph of our packages, read statically (every `import`, at module or function level, and
under `if TYPE_CHECKING:`: an annotation-only import still ties the two modules together).

No module may reach itself through imports, and imports run one way: `text/` and the snapshot contract
depend on nothing of ours but `text/` itself and the version constants, `assets/` use `build/` and never
the reverse, serving never imports Dagster, the pipeline never imports serving (answering is serving's:
`petrichor_serving.answer`; what both sides read is `petrichor_pipeline.text`), and the HTTP contract (the
tool declaration, the request models, the endpoint table's machinery, the error mapping) imports no agent module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("petrichor_pipeline", "petrichor_serving", "petrichor")


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


def test_text_and_the_contract_import_nothing_of_ours_but_text(graph):
    """Text imports only text; the contract's modules import text and each other. Both may read the version
    constants (`versions`, which imports nothing)."""
    leaf = "petrichor_pipeline.versions"
    layers = {
        "petrichor_pipeline.text": ("petrichor_pipeline.text", leaf),
        "petrichor_pipeline.contract": ("petrichor_pipeline.text", "petrichor_pipeline.contract", leaf),
    }
    bad = {
        name: sorted(n for n in _ours(graph, name) if not any(_under(n, ok) for ok in allowed))
        for layer, allowed in layers.items()
        for name in graph
        if _under(name, layer)
    }
    assert {k: v for k, v in bad.items() if v} == {}
    assert _ours(graph, leaf) == set()


def test_build_never_imports_the_dagster_layer(graph):
    dagster_layer = [
        "petrichor_pipeline.assets",
        "petrichor_pipeline.definitions",
        "petrichor_pipeline.jobs",
        "petrichor_pipeline.sensors",
        "petrichor_pipeline.checks",
        "petrichor_pipeline.resources",
        "petrichor_pipeline.runner",
    ]
    bad = {
        name: sorted(n for n in _ours(graph, name) if any(_under(n, layer) for layer in dagster_layer))
        for name in graph
        if _under(name, "petrichor_pipeline.build")
    }
    assert {k: v for k, v in bad.items() if v} == {}
    assert any(_under(n, "petrichor_pipeline.build") for n in _ours(graph, "petrichor_pipeline.assets.chunks"))


def test_serving_never_imports_dagster(graph):
    bad = {
        name: sorted(n for n in graph[name] if _under(n, "dagster") or n.startswith("dagster_"))
        for name in graph
        if _under(name, "petrichor_serving")
    }
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_pipeline_never_imports_serving(graph):
    """Serving builds on the pipeline's contract, text and model protocols; answering questions is
    serving's alone, so no pipeline module (the offline model included) reaches `petrichor_serving`."""
    bad = {name: sorted(n for n in _ours(graph, name) if _under(n, "petrichor_serving")) for name in graph if _under(name, "petrichor_pipeline")}
    assert {k: v for k, v in bad.items() if v} == {}
    assert any(_under(n, "petrichor_pipeline.text.prose") for n in _ours(graph, "petrichor_serving.answer.answers"))
    assert any(_under(n, "petrichor_pipeline.text.prose") for n in _ours(graph, "petrichor_pipeline.models.offline.pages"))


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
