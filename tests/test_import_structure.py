"""The package's import structure: no module of ``setfuncs`` imports itself through others, the core
(``setfuncs/*.py``) imports nothing from ``setfuncs.experiments``, and no experiment package imports
another. Every import statement counts, at module level or inside a function, since a deferred
import is still an import circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import setfuncs

PACKAGE = Path(setfuncs.__file__).resolve().parent
EXPERIMENTS = ("circle", "mixture", "pointcloud", "attention")


def _modules() -> dict[str, tuple[Path, bool]]:
    """``{dotted name: (file, is a package)}`` of every module of ``setfuncs``."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if package else parts)] = (path, package)
    return modules


def _imports(name: str, path: Path, package: bool, modules: dict) -> set[str]:
    """The modules of ``setfuncs`` that ``name`` imports (``from a import b`` counts ``a.b`` when that
    is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if package else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {m for m in found if m in modules}


def _graph() -> dict[str, set[str]]:
    """Who imports whom, without the edges between a package and its own modules (importing a module
    runs its package's ``__init__``; a package may name its modules)."""
    modules = _modules()
    related = lambda a, b: a.startswith(b + ".") or b.startswith(a + ".")  # noqa: E731
    return {name: {m for m in _imports(name, path, package, modules) if not related(name, m)}
            for name, (path, package) in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    """The check below could fail: three modules that import each other in turn are one circle."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_through_others() -> None:
    assert _circles(_graph()) == []


def test_the_core_imports_nothing_of_the_experiments() -> None:
    graph = _graph()
    core = [name for name in graph if name.count(".") == 1 and not name.startswith("setfuncs.experiments")]
    assert len(core) > 10
    looking_up = {name: sorted(m for m in graph[name] if m.startswith("setfuncs.experiments")) for name in core}
    assert {name: found for name, found in looking_up.items() if found} == {}


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_no_experiment_package_imports_another(experiment: str) -> None:
    graph = _graph()
    own = f"setfuncs.experiments.{experiment}"
    others = tuple(f"setfuncs.experiments.{other}" for other in EXPERIMENTS if other != experiment)
    crossing = {name: sorted(m for m in imports if m.startswith(others))
                for name, imports in graph.items() if name == own or name.startswith(own + ".")}
    assert len(crossing) > 5
    assert {name: found for name, found in crossing.items() if found} == {}
