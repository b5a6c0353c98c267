"""The first code cell of every chapter: install ``setfuncs`` where it is missing, from the book's site.

A chapter opened on Colab, or downloaded and opened elsewhere, has no ``setfuncs``; this cell installs
it with the chapters' extras (:data:`EXTRAS`) from the wheel the published site serves,
``<html.baseurl>_static/wheels/setfuncs-<version>-py3-none-any.whl`` (``html.baseurl`` in
``_config.yml``, the version from ``pyproject.toml``; ``make book`` builds the wheel with
``scripts/wheel.py``). The wheel holds the package and the results files the experiment chapters
read, as package data, and no notebook: the cell used to clone the repository, whose notebooks
hold every solution and every self-check answer, onto every student's disk. Where the environment
variable ``SETFUNCS_WHEEL_URL`` is set, its value replaces the URL (a mirror, a local copy
``file:///path/to/setfuncs-<version>-py3-none-any.whl``, the tests). Where ``setfuncs`` is
importable (``make lab``, Binder, the book build, nbmake) the cell does nothing. It is tagged
``remove-cell``: the HTML book does not show it, while the downloaded ``.ipynb`` and the launched
notebooks keep it. The teacher's and the student's editions download the same cell, so jupyter-cache,
which hashes a notebook by its code cells, finds both editions' chapters under the same key.

The cell's ``%pip`` line reaches IPython, which expands ``$name`` and ``{expression}`` in it, and then
a shell: ``html.baseurl`` is checked against a strict pattern (:data:`BASEURL`: ``https://host/path/``
in letters, digits and ``. _ ~ - /``) and refused in one line naming the key otherwise, and the
requirement (``setfuncs[...] @ URL``) goes to the shell quoted (:func:`shlex.quote`, when the cell runs).

    python scripts/install_cell.py --check   # exit status 1, naming each notebook that is out of date
    python scripts/install_cell.py --write   # insert or update the cell in book/*.ipynb and drafts/*.ipynb
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_config.yml"
PYPROJECT = ROOT / "pyproject.toml"
#: The chapters, and the chapters that wait in drafts/ for their sweep's rerun.
NOTEBOOK_DIRS = (ROOT / "book", ROOT / "drafts")
#: The extras of ``pyproject.toml`` the chapters need: figures and sliders, point clouds, attention.
EXTRAS = ("notebooks", "pointcloud", "attention")
#: Marks the cell (``--write`` replaces the cell with this tag) and names it (the cell id).
TAG = "install-setfuncs"
#: Jupyter Book 1 (myst-nb) leaves a cell with this tag out of the HTML page.
HIDE_TAG = "remove-cell"
#: The environment variable that, when set, names the wheel to install instead of the site's.
URL_VARIABLE = "SETFUNCS_WHEEL_URL"
#: The published site's address, ``html.baseurl``: ``https://host[:port]/`` and folders, each ending in
#: ``/``, only characters that neither the shell nor IPython (``$name``, ``{expression}``) gives a
#: meaning; a folder starts with a letter or a digit (never ``.`` or ``..``).
BASEURL = re.compile(r"https://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?/"
                     r"(?:[A-Za-z0-9][A-Za-z0-9._~-]*/)*")
#: Where the site serves the wheel, below ``html.baseurl`` (Sphinx copies ``_build/static`` to ``_static``).
WHEEL_FOLDER = "_static/wheels/"


def _wheel_script() -> ModuleType:
    """``scripts/wheel.py``, which names the wheel (its version from ``pyproject.toml``), as a module."""
    spec = importlib.util.spec_from_file_location("wheel_script", Path(__file__).with_name("wheel.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def baseurl(config: Path = CONFIG) -> str:
    """The published site's address, ``html.baseurl`` in the Jupyter Book configuration.

    Raises:
        ValueError: In one line naming the key (``html.baseurl``) and the fix, where it is missing or
            breaks :data:`BASEURL`: it reaches IPython and a shell in every chapter's first cell.
    """
    settings = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    html = settings.get("html") if isinstance(settings, dict) else None
    url = html.get("baseurl") if isinstance(html, dict) else None
    if not (isinstance(url, str) and BASEURL.fullmatch(url)):
        raise ValueError(f"{config}: html.baseurl is {url!r}, not https://host/path/ (letters, digits and "
                         f". _ ~ - only, ending in /); set it to the published site's address, e.g. "
                         f"https://owner.github.io/repo/ (the install cell installs setfuncs from there)")
    return url


def wheel_url(config: Path = CONFIG, pyproject: Path = PYPROJECT) -> str:
    """The URL of the wheel on the published site: :func:`baseurl`, :data:`WHEEL_FOLDER`, the wheel's name."""
    wheel = _wheel_script()
    return f"{baseurl(config)}{WHEEL_FOLDER}{wheel.wheel_name(wheel.version(pyproject))}"


def requirement(url: str) -> str:
    """What the cell hands pip: ``setfuncs`` with :data:`EXTRAS` from ``url`` (PEP 508's ``name @ URL``)."""
    return f"setfuncs[{','.join(EXTRAS)}] @ {url}"


def install_command() -> str:
    """The cell's ``%pip`` line; IPython puts the quoted requirement (``requirement``) in its place."""
    return "%pip install --quiet {requirement}"


def install_source(config: Path = CONFIG, pyproject: Path = PYPROJECT) -> str:
    """The cell's code: a no-op where ``setfuncs`` is importable; otherwise the wheel (the site's, or
    ``$SETFUNCS_WHEEL_URL``) installed with ``%pip``, and the import system's caches cleared so that
    the running kernel finds the new package without a restart."""
    url = wheel_url(config, pyproject)
    return ("# Colab or a downloaded notebook: if setfuncs, the book's package, is missing, install it from the\n"
            "# wheel the book's site serves (the package and the results files the chapters read; no notebook).\n"
            f"# {URL_VARIABLE}, where set, names another copy of the wheel: a mirror or a local file.\n"
            "import importlib\n"
            "import importlib.util\n"
            "import os\n"
            "import shlex\n"
            "\n"
            'if importlib.util.find_spec("setfuncs") is None:\n'
            f'    wheel = os.environ.get("{URL_VARIABLE}") or (\n'
            f'        "{url}")\n'
            f'    requirement = shlex.quote(f"{requirement("{wheel}")}")\n'
            f"    {install_command()}\n"
            "    importlib.invalidate_caches()")


def install_cell(config: Path = CONFIG) -> dict:
    """The cell as nbformat 4.5 stores it, clean: no outputs, no execution count."""
    source = install_source(config)
    return {"cell_type": "code", "execution_count": None, "id": TAG,
            "metadata": {"tags": [HIDE_TAG, TAG]}, "outputs": [],
            "source": source.splitlines(keepends=True)}


def notebooks() -> list[Path]:
    """Every chapter notebook: ``book/*.ipynb`` and ``drafts/*.ipynb``."""
    return [path for folder in NOTEBOOK_DIRS for path in sorted(folder.glob("*.ipynb"))]


def _is_install_cell(cell: dict) -> bool:
    """Whether ``cell`` carries the install cell's tag."""
    return TAG in cell.get("metadata", {}).get("tags", [])


def problem(path: Path, config: Path = CONFIG) -> str | None:
    """Why ``path`` lacks the current install cell as its first code cell; None if it has it."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    tagged = sum(map(_is_install_cell, cells))
    if not code or not _is_install_cell(code[0]):
        return "no install cell" if not tagged else "the install cell is not the first code cell"
    if tagged > 1:
        return f"{tagged} cells tagged {TAG}"
    if code[0] != install_cell(config):
        return "the install cell differs from the one _config.yml and pyproject.toml give"
    return None


def _shown(path: Path) -> Path:
    """``path`` relative to the repository where it lies inside it, for messages."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def check(paths: list[Path] | None = None, config: Path = CONFIG) -> list[str]:
    """One line per notebook whose install cell is missing or out of date, naming the fix."""
    return [f"{_shown(path)}: {why}; run `python scripts/install_cell.py --write`"
            for path in (notebooks() if paths is None else paths)
            if (why := problem(path, config)) is not None]


def write(path: Path, config: Path = CONFIG) -> bool:
    """Put the install cell before the first other code cell of ``path``; True if the file changed.

    Any earlier install cell is removed first. The notebook is written as it is stored:
    ``indent=1``, keys sorted, non-ASCII kept, a trailing newline.
    """
    text = path.read_text(encoding="utf-8")
    notebook = json.loads(text)
    cells = [cell for cell in notebook["cells"] if not _is_install_cell(cell)]
    first_code = next((i for i, cell in enumerate(cells) if cell["cell_type"] == "code"), len(cells))
    notebook["cells"] = cells[:first_code] + [install_cell(config)] + cells[first_code:]
    new_text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if new_text == text:
        return False
    path.write_text(new_text, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    """``--check`` or ``--write``; the exit status is 1 when ``--check`` finds a notebook out of date, 2
    when ``_config.yml``'s ``html.baseurl`` (:func:`baseurl`) or ``pyproject.toml``'s version is
    refused, before any notebook is read."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="name every notebook whose install cell is out of date")
    action.add_argument("--write", action="store_true", help="insert or update the install cell in every notebook")
    args = parser.parse_args(argv)
    try:
        url = wheel_url(CONFIG)
    except ValueError as error:
        parser.error(str(error))
    if args.write:
        for path in notebooks():
            if write(path):
                print(f"updated {_shown(path)}")
        return 0
    problems = check()
    print("\n".join(problems) or f"every notebook starts with the install cell: %pip install {requirement(url)}",
          file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
