"""No import circles in the package: every ``combatsim`` import in src/ (at module level, inside
functions, and ``importlib.import_module`` of a literal name) is an edge, and the graph they make
has no cycle, so each module can be read and changed knowing only what it imports."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import combatsim

ROOT = Path(combatsim.__file__).parent


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        name = ".".join(("combatsim", *path.relative_to(ROOT).with_suffix("").parts))
        found[name.removesuffix(".__init__")] = path
    return found


def imported_names(name: str, path: Path) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names.update([base, *(f"{base}.{alias.name}" for alias in node.names)])
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value)
    return names


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph = {}
    for name, path in known.items():
        edges = set()
        for target in imported_names(name, path):
            while target and target not in known:  # a name imported from a module: that module
                target = target.rpartition(".")[0]
            if target and target not in (name, "combatsim"):
                edges.add(target)
        graph[name] = edges
    return graph


def test_the_package_has_no_import_circle():
    try:
        TopologicalSorter(import_graph()).prepare()
    except CycleError as circle:
        raise AssertionError(f"import circle: {' -> '.join(circle.args[1])}") from None


def test_a_circle_would_be_found():
    graph = import_graph()
    assert "combatsim.d100.layout" in graph["combatsim.d100.engine"]
    graph["combatsim.d100.layout"] = graph["combatsim.d100.layout"] | {"combatsim.d100.engine"}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError:
        return
    raise AssertionError("a circle went unseen")
