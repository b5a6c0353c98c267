"""One ES module per explorable, for JupyterLab and Colab: the file and the files it imports, inlined.

The explorables' front ends are ES modules in ``setfuncs/explorables/js/``. The static book serves
that folder as it is (``_static/explorables/``), and the browser resolves each module's imports of
its siblings (``import { slider } from "./lib.js";``). A notebook frontend loads an anywidget's
front end from one string (its ``_esm``), where a relative import has nothing to resolve against, so
:func:`module_source` inlines the imported files: each sibling once, in import order, with its
``export`` keywords dropped, then the entry file without its import lines. The rules that make this
exact are checked, not assumed: imports only of named bindings from ``./<sibling>.js``, only at the
top of a file, each exported by that sibling; every sibling's exports are top-level ``export function|const|class`` declarations;
no two inlined files declare the same top-level name.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

__all__ = ["JS_DIR", "module_order", "module_source"]

#: The folder of the explorables' front-end modules, which the wheel ships as package data.
JS_DIR = Path(str(resources.files("setfuncs.explorables") / "js"))
IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([a-z0-9_]+)\.js";[ \t]*$', re.MULTILINE)
ANY_IMPORT = re.compile(r"^\s*import\b", re.MULTILINE)
EXPORT = re.compile(r"^export\s+(?=(?:async\s+)?function\b|const\b|let\b|class\b)", re.MULTILINE)
EXPORTED = re.compile(r"^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)", re.MULTILINE)
DECLARED = re.compile(r"^(?:export\s+)?(?:async\s+)?(?:function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)",
                      re.MULTILINE)


def _read(name: str, folder: Path) -> str:
    path = folder / f"{name}.js"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such explorable module; the modules are {sorted(p.stem for p in folder.glob('*.js'))}")
    return path.read_text(encoding="utf-8")


def _imports(source: str, path: str) -> tuple[list[str], str]:
    """The siblings ``source`` imports and the source without its import lines; an import this
    module cannot inline is refused, naming the file."""
    names = [match.group(2) for match in IMPORT.finditer(source)]
    rest = IMPORT.sub("", source)
    if ANY_IMPORT.search(rest):
        line = ANY_IMPORT.search(rest).start()
        raise ValueError(f"{path}: only `import {{ ... }} from \"./<sibling>.js\";` lines can be inlined, "
                         f"found {rest[line:rest.find(chr(10), line + 1)].strip()!r}")
    return names, rest


def module_order(name: str, folder: Path = JS_DIR) -> list[str]:
    """The module ``name`` and every sibling it imports, directly or not, each once: the imported
    before the importing, ``name`` last (the order :func:`module_source` inlines them in, and the
    files a page that shows the explorable needs)."""
    order: list[str] = []

    def visit(sibling: str, stack: tuple[str, ...]) -> None:
        if sibling in stack:
            raise ValueError(f"{folder / (sibling + '.js')}: imports form a cycle {' -> '.join(stack + (sibling,))}")
        if sibling in order:
            return
        names, _ = _imports(_read(sibling, folder), str(folder / f"{sibling}.js"))
        for child in names:
            visit(child, stack + (sibling,))
        order.append(sibling)

    visit(name, ())
    return order


def module_source(name: str, folder: Path = JS_DIR) -> str:
    """The explorable ``name`` (``js/<name>.js``) as one self-contained ES module."""
    order = module_order(name, folder)
    seen_names: dict[str, str] = {}
    for sibling in order:
        source = _read(sibling, folder)
        for match in IMPORT.finditer(source):
            exported = set(EXPORTED.findall(_read(match.group(2), folder)))
            missing = [n.strip() for n in match.group(1).split(",") if n.strip() and n.strip() not in exported]
            if missing:
                raise ValueError(f"{folder / (sibling + '.js')}: imports {missing} from {match.group(2)}.js, "
                                 f"which does not export them")
    parts = []
    for sibling in order:
        _, body = _imports(_read(sibling, folder), str(folder / f"{sibling}.js"))
        for declared in DECLARED.findall(body):
            if declared in seen_names and seen_names[declared] != sibling:
                raise ValueError(f"{folder / (sibling + '.js')}: declares {declared!r}, as "
                                 f"{seen_names[declared]}.js does; inlined together they would clash")
            seen_names[declared] = sibling
        parts.append(f"// ---- {sibling}.js\n" + (body if sibling == name else EXPORT.sub("", body)))
    return "\n".join(parts)
