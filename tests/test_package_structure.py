"""The package's structure: no module of ``setfuncs`` imports itself through others, the core
(``setfuncs/*.py``) imports nothing from ``setfuncs.experiments``, and no experiment package imports
another (every import statement counts, at module level or inside a function, since a deferred
import is still an import circle); the experiments layer is kept in small parts (no module over
:data:`MOST_LINES` lines, no function over :data:`MOST_FUNCTION_LINES`); and the tests use the
engine through its public names only.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

import setfuncs

PACKAGE = Path(setfuncs.__file__).resolve().parent
EXPERIMENTS = ("circle", "mixture", "pointcloud", "attention")
#: The most lines of a module of ``setfuncs/experiments/``.
MOST_LINES = 400
#: The most lines of a function there (its signature, docstring and body).
MOST_FUNCTION_LINES = 70
TESTS = Path(__file__).resolve().parent


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


@lru_cache(maxsize=1)
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


def _too_long(path: Path) -> list[str]:
    """What in ``path`` is over the limits: the module, or a function (nested ones included)."""
    text = path.read_text(encoding="utf-8")
    lines = text.count("\n")
    found = [f"{path.name}: {lines} lines"] if lines > MOST_LINES else []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MOST_FUNCTION_LINES:
                found.append(f"{path.name}:{node.lineno} {node.name}: {length} lines")
    return found


def test_the_size_check_finds_a_long_module_and_a_long_function(tmp_path: Path) -> None:
    long = tmp_path / "long.py"
    long.write_text("def f():\n" + "    x = 1\n" * MOST_FUNCTION_LINES + "\n" * MOST_LINES)
    assert _too_long(long) == [f"long.py: {MOST_LINES + MOST_FUNCTION_LINES + 1} lines", "long.py:1 f: 71 lines"]


def test_the_experiments_layer_is_in_small_parts() -> None:
    found = [line for path in sorted((PACKAGE / "experiments").rglob("*.py")) for line in _too_long(path)]
    assert found == []


def _private_engine_names() -> set[str]:
    """The engine's top-level names that begin with an underscore (functions, classes, constants)."""
    names = set()
    for path in (PACKAGE / "experiments" / "engine").glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = ([node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else
                       [t.id for t in node.targets if isinstance(t, ast.Name)] if isinstance(node, ast.Assign) else [])
            names.update(n for n in targets if n.startswith("_") and not n.startswith("__"))
    return names


def _private_uses(path: Path, private: set[str]) -> list[str]:
    """Where the test file ``path`` imports a private name from the engine, or reads or patches one of
    ``private`` (as an attribute or by its name in a string, as ``monkeypatch.setattr`` takes it)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("setfuncs.experiments.engine"):
            found += [f"{path.name}: imports {a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Attribute) and node.attr in private:
            found.append(f"{path.name}:{node.lineno} .{node.attr}")
        elif isinstance(node, ast.Constant) and node.value in private:
            found.append(f"{path.name}:{node.lineno} {node.value!r}")
    return found


def test_the_private_name_check_finds_an_import_and_a_patch(tmp_path: Path) -> None:
    test = tmp_path / "test_x.py"
    test.write_text("from setfuncs.experiments.engine.submit import _hidden\n"
                    "monkeypatch.setattr(sweep, '_helper', None)\n")
    assert _private_uses(test, {"_helper"}) == ["test_x.py: imports _hidden", "test_x.py:2 '_helper'"]


def test_the_tests_use_only_public_names_of_the_engine() -> None:
    private = _private_engine_names()
    found = [use for path in sorted(TESTS.glob("*.py")) if path.name != Path(__file__).name
             for use in _private_uses(path, private)]
    assert found == []
