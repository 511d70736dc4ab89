"""The import graph of casework: every module imports, no cycles, the boundary rules hold.

Edges are read from the source (``import`` / ``from ... import`` of ``casework.*``). Cycles
are checked on module-level imports (an import inside a function runs on first use, which is
how heavy or optional parts load lazily); the boundary rules apply to every import, lazy or
not: apps never import each other, ``runtime`` imports no app, and ``runtime`` / ``llm`` /
``stores`` never import ``evals`` / ``server`` / ``cli``.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import casework

ROOT = Path(casework.__file__).parent


def _modules() -> dict[str, Path]:
    found = {"casework": ROOT / "__init__.py"}
    for info in pkgutil.walk_packages([str(ROOT)], prefix="casework."):
        name = info.name
        if ".migrations" in name or name.endswith("__main__"):
            continue  # Alembic scripts run inside Alembic; __main__ runs the CLI
        rel = Path(*name.split(".")[1:])
        path = ROOT / rel / "__init__.py" if info.ispkg else (ROOT / rel).with_suffix(".py")
        found[name] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_pkg = MODULES[module].name == "__init__.py"
    parts = module.split(".")
    base = parts if is_pkg else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = _resolve(module, node)
        # `from casework.evals import runner` imports the submodule when there is one
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    return []


class _Imports(ast.NodeVisitor):
    """Collects casework imports; those outside any function run when the module loads."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.depth = 0
        self.top: set[str] = set()
        self.every: set[str] = set()

    def _add(self, node: ast.Import | ast.ImportFrom) -> None:
        for target in _targets(self.module, node):
            if target.startswith("casework") and _known(target) != self.module:
                self.every.add(_known(target))
                if self.depth == 0:
                    self.top.add(_known(target))

    visit_Import = _add
    visit_ImportFrom = _add

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node):  # TYPE_CHECKING blocks are annotations only
            self.generic_visit(node)

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function


def _edges(module: str) -> tuple[set[str], set[str]]:
    """(module-level imports, every import) of casework modules."""
    collector = _Imports(module)
    collector.visit(ast.parse(MODULES[module].read_text(encoding="utf-8")))
    return collector.top, collector.every


def _known(name: str) -> str:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


GRAPH = {m: _edges(m) for m in MODULES}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_imports(module: str) -> None:
    importlib.import_module(module)


def test_no_import_cycle_at_module_level() -> None:
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH[node][0]):
            # importing a package's submodule runs the package first: that edge is implied
            if node.startswith(nxt + "."):
                continue
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt in GRAPH and not state.get(nxt):
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(GRAPH):
        if not state.get(module):
            visit(module)
    assert cycles == []


def _app_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "apps" else None


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_boundary_rules() -> None:
    broken = []
    for module, (_, every) in GRAPH.items():
        app, layer = _app_of(module), _layer(module)
        for target in every:
            other = _app_of(target)
            if app and other and other != app:
                broken.append(f"app {module} imports another app: {target}")
            if layer == "runtime" and other:
                broken.append(f"runtime {module} imports an app: {target}")
            if layer in ("runtime", "llm", "stores") and _layer(target) in (
                "evals",
                "server",
                "cli",
            ):
                broken.append(f"{module} imports {target}")
    assert broken == []


def test_the_graph_sees_real_edges() -> None:
    top, every = GRAPH["casework.evals.runner"]
    assert "casework.evals.metrics" in top and "casework.evals.store" in every - top
    assert "casework.runtime.decision" in GRAPH["casework.runtime.strategy"][0]
