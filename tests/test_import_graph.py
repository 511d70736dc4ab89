"""The import graph of casework: every module imports, no cycles, the boundary rules hold.

Edges are read from the source: every ``import`` / ``from ... import`` of ``casework.*`` in a
module, at module level or inside a function (an import inside a function is an edge all the
same: it closes a circle on first use, it does not open one less). Only ``if TYPE_CHECKING:``
blocks are left out (annotations, never run). A cycle is a strongly connected component of
that graph; the components that remain are listed in ``KNOWN_CYCLES`` and the list can only
shrink. The boundary rules: apps never import each other nor ``server`` / ``web`` / ``bench``,
``web`` never imports ``server`` (which mounts it), ``runtime`` imports no app, and ``runtime`` / ``llm`` / ``stores`` never import ``evals`` /
``server`` / ``cli``. An app's faces (``cli``, ``api``, ``review``, ``demo``, ``evalsuite``)
import of their own app only what the README's template allows (``FACE_MAY_IMPORT``).
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


# issue #20: to dissolve. Each entry is one cycle (a strongly connected component of the
# import graph, function-level imports included). The test fails on a cycle not listed here
# and on a listed one that is gone, so this list can only shrink: delete an entry when its
# cycle is dissolved, and never add one. Empty since the last ones (documents agent/deps/
# service/strategies, sql agent/consistency/service/strategies) were dissolved on main.
KNOWN_CYCLES: list[frozenset[str]] = []


def _edges_of(module: str) -> list[str]:
    out = []
    for nxt in sorted(GRAPH[module][1]):
        # importing a package's submodule runs the package first: that edge is implied
        if module.startswith(nxt + ".") or nxt not in GRAPH:
            continue
        out.append(nxt)
    return out


def import_cycles() -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan), or a module
    that imports itself; sorted by their first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0

    def connect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in _edges_of(node):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1 or node in _edges_of(node):
                found.append(frozenset(component))

    for module in sorted(GRAPH):
        if module not in index:
            connect(module)
    return sorted(found, key=sorted)


def _show(cycles: list[frozenset[str]]) -> str:
    return "\n".join(" <-> ".join(sorted(c)) for c in cycles) or "(none)"


def test_no_import_cycle_but_the_known_ones() -> None:
    found = import_cycles()
    new = [c for c in found if c not in KNOWN_CYCLES]
    gone = [c for c in KNOWN_CYCLES if c not in found]
    assert not new, f"import cycles not in KNOWN_CYCLES (dissolve them):\n{_show(new)}"
    assert not gone, (
        f"KNOWN_CYCLES lists cycles that are gone (delete them from the list):\n{_show(gone)}"
    )


def test_function_level_imports_count_in_cycles() -> None:
    """A circle closed by an import inside a function is still a circle."""
    saved = dict(GRAPH)
    try:
        top, every = GRAPH["casework.runtime.decision"]
        GRAPH["casework.runtime.decision"] = (top, every | {"casework.runtime.strategy"})
        assert frozenset({"casework.runtime.decision", "casework.runtime.strategy"}) in (
            import_cycles()
        )
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


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
            if app and _layer(target) in ("server", "web", "bench"):
                broken.append(f"app {module} imports {target}")
            if layer == "web" and _layer(target) == "server":  # the server mounts the web UI
                broken.append(f"{module} imports {target}")
            if layer == "runtime" and other:
                broken.append(f"runtime {module} imports an app: {target}")
            if layer in ("runtime", "llm", "stores") and _layer(target) in (
                "evals",
                "server",
                "cli",
            ):
                broken.append(f"{module} imports {target}")
    assert broken == []


FACES = ("cli", "api", "review", "demo", "evalsuite")
FACE_MAY_IMPORT = {"service", "deps", "models"}
"""What a face (``cli``, ``api``, ``review``, ``demo``, ``evalsuite``) may import of its own
app, as the README's template says; everything that writes or decides goes through ``service``."""
FACE_EXTRA = {
    "cli": {"demo"},  # the `demo` command runs the app's demo
    "evalsuite": {"metrics", "dataset", "normalize", "benchmark", "adversarial", "evaluation"},
}
"""Per face: the pure metric and dataset modules the evaluation scores and reads cases with."""
APP_EXTRA = {"vanpool": {"settings"}}
"""Per app: its own settings module, for the apps that have one."""


def face_imports_outside_the_template() -> list[str]:
    broken = []
    for module, (_, every) in GRAPH.items():
        app, parts = _app_of(module), module.split(".")
        if app is None or len(parts) < 4 or parts[3] not in FACES:
            continue
        # a face's package (``cli/``) is one face: its modules import each other
        allowed = {parts[3]} | FACE_MAY_IMPORT | FACE_EXTRA.get(parts[3], set())
        allowed |= APP_EXTRA.get(app, set())
        for target in sorted(every):
            if _app_of(target) != app:
                continue
            name = target.split(".")[3] if target.count(".") >= 3 else "__init__"
            if name not in allowed:
                broken.append(f"{module} imports {target}")
    return broken


def test_faces_import_only_service_deps_and_models_of_their_app() -> None:
    """Function-level imports included: a face that needs more asks ``service`` for it."""
    assert face_imports_outside_the_template() == []


def test_the_face_rule_sees_function_level_imports() -> None:
    saved = dict(GRAPH)
    try:
        top, every = GRAPH["casework.apps.sql.cli"]
        GRAPH["casework.apps.sql.cli"] = (top, every | {"casework.apps.sql.agent"})
        assert "casework.apps.sql.cli imports casework.apps.sql.agent" in (
            face_imports_outside_the_template()
        )
        # a module of a cli package is the cli face: its siblings yes, the agent no
        sub = "casework.apps.receipts.cli.validate"
        top, every = GRAPH[sub]
        assert "casework.apps.receipts.cli.common" in every
        GRAPH[sub] = (top, every | {"casework.apps.receipts.agent"})
        assert sorted(face_imports_outside_the_template()) == [
            f"{sub} imports casework.apps.receipts.agent",
            "casework.apps.sql.cli imports casework.apps.sql.agent",
        ]
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


TEMPLATE_ROWS = {
    "__init__",
    "models",
    "tables",
    "settings",
    "repository",
    "rules",
    "deps",
    "tools",
    "agent",
    "strategies",
    "service",
    *FACES,
}
"""The README template's named rows; ``prompts/`` and ``data/`` are its folders."""
HELPER_MAY_IMPORT = {"models", "rules", "tables", "repository", "settings"}
"""What a helper imports of its app besides other helpers: the rows below ``deps``. A helper
that works over the run's stores takes the deps as a parameter (its annotation imported under
``TYPE_CHECKING``); whatever needs the agent, the tools, a strategy or the service is
orchestration and lives in ``strategies`` or ``service``, or takes that step as a callable."""
DATA_SCRIPT_MAY_IMPORT = {"service", "deps", "models", "settings"}
"""A ``data/`` script (``python -m casework.apps.<app>.data.<script>`` regenerates a dataset)
is a face: it reaches the app through ``service`` like the CLI, and reads its helpers (the
dataset module that builds the cases)."""
HELPERS_STILL_ABOVE: dict[str, str] = {}
"""#31: helpers that still import above the helper zone, each with what frees it. The test
fails on a helper that is not listed and on a listed one that now fits, so this only shrinks."""


ROW_PACKAGES = {"service", "cli", "strategies"}
"""Rows that may outgrow one file into a package of one module per job (the service's
imports, replies, approvals...; the CLI's command groups; sql's strategies and their
self-consistency run): every module of it is that row."""


def _zone(module: str) -> str | None:
    """``row``, ``helper``, ``data`` (a dataset script) or ``folder``; None outside the apps."""
    parts = module.split(".")
    if _app_of(module) is None or len(parts) < 4:
        return None
    if parts[3] in ("prompts", "data") and len(parts) == 4:
        return "folder"
    if parts[3] == "data":
        return "data"
    if parts[3] in ROW_PACKAGES:
        return "row"
    return "row" if len(parts) == 4 and parts[3] in TEMPLATE_ROWS else "helper"


def _own_name(target: str) -> str:
    return target.split(".")[3] if target.count(".") >= 3 else "__init__"


def helpers_importing_above_the_zone() -> dict[str, list[str]]:
    """Per helper or ``data/`` script, the modules of its app it imports and may not
    (function-level imports included)."""
    broken: dict[str, list[str]] = {}
    for module, (_, every) in GRAPH.items():
        zone, app = _zone(module), _app_of(module)
        if zone not in ("helper", "data"):
            continue
        for target in sorted(every):
            if _app_of(target) != app:
                continue
            name = _own_name(target)
            allowed = DATA_SCRIPT_MAY_IMPORT if zone == "data" else HELPER_MAY_IMPORT
            ok = name in allowed or _zone(target) == "helper"
            if not ok:
                broken.setdefault(module, []).append(target)
    return broken


def test_every_app_module_is_a_template_row_or_a_helper() -> None:
    """A module of an app folder that is no template row is a helper: domain logic over the
    app's models, rules, tables, repository, settings and other helpers."""
    broken = helpers_importing_above_the_zone()
    new = {m: t for m, t in broken.items() if m not in HELPERS_STILL_ABOVE}
    fixed = [m for m in HELPERS_STILL_ABOVE if m not in broken]
    assert new == {}, "helpers importing above the helper zone (move the orchestration up)"
    assert fixed == [], "HELPERS_STILL_ABOVE lists helpers that now fit: delete them"


def test_the_helper_rule_sees_function_level_imports() -> None:
    saved = dict(GRAPH)
    try:
        top, every = GRAPH["casework.apps.receipts.places"]
        GRAPH["casework.apps.receipts.places"] = (top, every | {"casework.apps.receipts.service"})
        assert helpers_importing_above_the_zone()["casework.apps.receipts.places"] == [
            "casework.apps.receipts.service"
        ]
    finally:
        GRAPH.clear()
        GRAPH.update(saved)
    assert _zone("casework.apps.receipts.harmonizer") == "helper"
    assert _zone("casework.apps.receipts.service") == "row"
    assert _zone("casework.apps.vanpool.service.approvals") == "row"
    assert _zone("casework.apps.receipts.cli.review") == "row"
    assert _zone("casework.apps.receipts.cli_tools") == "helper"
    assert _zone("casework.apps.documents.data.make_dataset") == "data"
    assert _zone("casework.runtime.react") is None


def test_the_graph_sees_real_edges() -> None:
    top, every = GRAPH["casework.evals.runrecord"]
    assert "casework.evals.metrics" in top and "casework.evals.store" in every - top
    assert "casework.runtime.decision" in GRAPH["casework.runtime.strategy"][0]


# issue #31 part 4: the platform's layers, by exact module name (a rule on `casework.cli`
# says nothing about `casework.clikit`). (importer, imported, why) — a module matches a name
# when it is that module or inside that package.
LAYER_RULES = [
    ("casework.llm", "casework.clikit", "llm reports progress through a sink the caller hands in"),
    ("casework.clikit", "casework.access", "an app's CLI gets users from casework.access.cli"),
    ("casework.stores", "casework.registry", "the migration folders are handed to the stores"),
    ("casework.runtime", "casework.server", "the runtime knows no HTTP"),
    ("<platform>", "casework.apps", "the platform takes an app through casework.registry"),
]
KNOWN_LAYER_BREAKS: set[tuple[str, str]] = set()
"""Edges that break a layer rule today (none since #31); like KNOWN_CYCLES, it only shrinks."""


def _is(module: str, name: str) -> bool:
    if name == "<platform>":
        return not _is(module, "casework.apps")
    return module == name or module.startswith(name + ".")


def layer_breaks() -> set[tuple[str, str]]:
    return {
        (module, target)
        for module, (_, every) in GRAPH.items()
        for target in every
        for importer, imported, _ in LAYER_RULES
        if _is(module, importer) and _is(target, imported)
    }


def test_layers_hold_by_exact_module_name() -> None:
    found = layer_breaks()
    new = sorted(found - KNOWN_LAYER_BREAKS)
    gone = sorted(KNOWN_LAYER_BREAKS - found)
    assert not new, f"imports across a layer (see LAYER_RULES): {new}"
    assert not gone, f"KNOWN_LAYER_BREAKS lists edges that are gone (delete them): {gone}"


def test_the_layer_rules_match_whole_names() -> None:
    assert _is("casework.llm.bundled", "casework.llm") and not _is(
        "casework.clikit", "casework.cli"
    )
    assert _is("casework.bench.ocr", "<platform>") and not _is(
        "casework.apps.hed.cli", "<platform>"
    )
    saved = dict(GRAPH)
    try:
        top, every = GRAPH["casework.llm.bundled"]
        GRAPH["casework.llm.bundled"] = (top, every | {"casework.clikit"})
        assert ("casework.llm.bundled", "casework.clikit") in layer_breaks()
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


def test_runtime_imports_no_fastapi() -> None:
    """Not even inside a function: the server turns a missing caller into a 401."""
    found = []
    for module, path in MODULES.items():
        if not _is(module, "casework.runtime"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            found += [
                f"{module}: {n}" for n in names if n.split(".")[0] in ("fastapi", "starlette")
            ]
    assert found == []
