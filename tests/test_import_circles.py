"""No import circles in the package: every ``combatsim`` import in src/ (at module level, inside
functions, and ``importlib.import_module`` of a literal name or of a computed one such as
``f"combatsim.{ruleset}.cli"``, which stands for every module its pattern matches) is an edge, and
the graph they make has no cycle, so each module can be read and changed knowing only what it
imports."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
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


def computed_name(node: ast.JoinedStr) -> re.Pattern[str]:
    """An f-string module name as a pattern: each ``{...}`` is one dotted part."""
    pattern = "".join(re.escape(part.value) if isinstance(part, ast.Constant) else r"[A-Za-z_]\w*"
                      for part in node.values)
    return re.compile(pattern)


def imported_names(name: str, path: Path, known: Iterable[str] = ()) -> set[str]:
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
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.JoinedStr)):
            pattern = computed_name(node.args[0])
            names.update(module for module in known if pattern.fullmatch(module))
    return names


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph = {}
    for name, path in known.items():
        edges = set()
        for target in imported_names(name, path, known):
            while target and target not in known:  # a name imported from a module: that module
                target = target.rpartition(".")[0]
            if target and target not in (name, "combatsim"):
                edges.add(target)
        graph[name] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The graph's strongly connected sets of two or more modules (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            members = {stack.pop()}
            while node not in members:
                members.add(stack.pop())
            if len(members) > 1:
                found.append(members)

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return found


def test_the_package_has_no_import_circle():
    found = circles(import_graph())
    assert not found, f"import circle among: {[sorted(members) for members in found]}"
    try:
        TopologicalSorter(import_graph()).prepare()
    except CycleError as circle:
        raise AssertionError(f"import circle: {' -> '.join(circle.args[1])}") from None


def test_a_ruleset_module_importing_its_dispatcher_back_is_a_circle():
    """The circles broken by moving shared code below the rulesets come back as soon as a ruleset
    module imports the module that loads it by a computed name."""
    graph = import_graph()
    assert "combatsim.scenario_fields" in graph["combatsim.d100.scenario"]
    assert "combatsim.d100.scenario" in graph["combatsim.scenario"]
    graph["combatsim.d100.scenario"] = graph["combatsim.d100.scenario"] | {"combatsim.scenario"}
    assert {"combatsim.scenario", "combatsim.d100.scenario"} in circles(graph)
    graph = import_graph()
    graph["combatsim.solve.chain"] = graph["combatsim.solve.chain"] | {"combatsim.solve"}
    assert any({"combatsim.solve", "combatsim.solve.chain"} <= members for members in circles(graph))


def test_computed_names_are_edges():
    graph = import_graph()
    assert {"combatsim.d100.cli", "combatsim.exp.cli", "combatsim.tss.cli"} <= graph["combatsim.cli"]
    assert "combatsim.tss.game" in graph["combatsim.game"]
    assert "combatsim.cli" not in set().union(*(graph[f"combatsim.{r}.cli"] for r in ("d100", "exp", "tss")))


def test_a_circle_would_be_found():
    graph = import_graph()
    assert "combatsim.d100.layout" in graph["combatsim.d100.engine"]
    graph["combatsim.d100.layout"] = graph["combatsim.d100.layout"] | {"combatsim.d100.engine"}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError:
        return
    raise AssertionError("a circle went unseen")
