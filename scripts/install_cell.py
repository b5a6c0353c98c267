"""The first code cell of every chapter: install ``setfuncs`` where it is missing.

A chapter opened on Colab, or downloaded and opened elsewhere, has no ``setfuncs``; this cell
clones the book's repository (``repository: url:`` and ``branch:`` in ``_config.yml``, the one place
that names the repository) next to the notebook and installs ``setfuncs`` from the clone, editable:
the experiment chapters read the committed ``results/`` of the clone, which a package installed from
a wheel would not carry. Where ``setfuncs`` is importable (``make lab``, Binder,
the book build, nbmake) the cell does nothing. It is tagged ``remove-cell``: the HTML book does not
show it, while the downloaded ``.ipynb`` and the launched notebooks keep it.

Readers run the cell's ``!git clone`` line in a shell, so every value of ``_config.yml`` that reaches
it is checked against a strict pattern (:func:`repository`: ``https://host/owner/repo``, a branch
name by git's rules in ``[A-Za-z0-9._/-]``, no ``$``, ``{`` or ``;``, which IPython or the shell
would expand) and quoted with :func:`shlex.quote` (which leaves such values as they are); a value
that breaks the pattern is refused in one line naming its key.

    python scripts/install_cell.py --check   # exit status 1, naming each notebook that is out of date
    python scripts/install_cell.py --write   # insert or update the cell in book/*.ipynb and drafts/*.ipynb
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_config.yml"
#: The chapters, and the chapters that wait in drafts/ for their sweep's rerun.
NOTEBOOK_DIRS = (ROOT / "book", ROOT / "drafts")
#: The extras of ``pyproject.toml`` the chapters need: figures and sliders, point clouds, attention.
EXTRAS = ("notebooks", "pointcloud", "attention")
#: Marks the cell (``--write`` replaces the cell with this tag) and names it (the cell id).
TAG = "install-setfuncs"
#: Jupyter Book 1 (myst-nb) leaves a cell with this tag out of the HTML page.
HIDE_TAG = "remove-cell"
#: The repository's URL: ``https://host/owner/repo`` (``.git`` allowed), only characters that neither
#: the shell nor IPython's ``!`` line (``$name``, ``{expression}``) gives a meaning; ``repo``, the
#: clone's folder, starts with a letter or a digit (never ``-`` or ``.``).
URL = re.compile(r"https://(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?)"
                 r"/(?P<owner>[A-Za-z0-9][A-Za-z0-9._-]*)/(?P<repo>[A-Za-z0-9][A-Za-z0-9._-]*?)(?:\.git)?/?")
#: The characters of a branch name (a subset of what git allows: ``git check-ref-format``).
BRANCH = re.compile(r"[A-Za-z0-9._/-]+")


def _branch_problem(branch: str) -> str | None:
    """Why ``branch`` is not a branch name the install cell may pass to git; None if it is one.

    Git's rules (``git check-ref-format --branch``) restricted to :data:`BRANCH`'s characters: no
    ``-`` first, no ``..``, no ``//``, no component that starts with ``.`` or ends with ``.lock``,
    no ``/`` or ``.`` at the end.
    """
    if not BRANCH.fullmatch(branch):
        return "only letters, digits and . _ / - are allowed"
    if branch.startswith("-"):
        return "it must not start with '-'"
    if ".." in branch or "//" in branch or branch.endswith(("/", ".")) or branch.startswith("/"):
        return "no '..', '//', or '/' or '.' at either end"
    if any(part.startswith(".") or part.endswith(".lock") for part in branch.split("/")):
        return "no part may start with '.' or end with '.lock'"
    return None


def repository(config: Path = CONFIG) -> tuple[str, str]:
    """The repository's URL and branch from ``repository:`` in the Jupyter Book configuration.

    Raises:
        ValueError: In one line naming the key (``repository.url``, ``repository.branch``) and the
            fix, where a value is missing or breaks :data:`URL` or git's branch rules
            (:func:`_branch_problem`): both reach a shell in every chapter's first cell.
    """
    settings = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    entry = settings.get("repository") if isinstance(settings, dict) else None
    entry = entry if isinstance(entry, dict) else {}
    url, branch = entry.get("url"), entry.get("branch")
    if not (isinstance(url, str) and URL.fullmatch(url)):
        raise ValueError(f"{config}: repository.url is {url!r}, not https://host/owner/repo (letters, digits and "
                         f". _ - only); set it to the repository's address, e.g. https://github.com/owner/repo "
                         f"(the launch buttons and the install cell use it)")
    why = _branch_problem(branch) if isinstance(branch, str) else "it is missing"
    if why:
        raise ValueError(f"{config}: repository.branch is {branch!r}: {why}; set it to the branch readers clone, "
                         f"e.g. main")
    return url.rstrip("/"), branch


def clone_folder(config: Path = CONFIG) -> str:
    """The folder the repository is cloned into: its name, e.g. ``deep-sets-book``."""
    return repository(config)[0].rsplit("/", 1)[-1].removesuffix(".git")


def clone_command(config: Path = CONFIG) -> str:
    """The shell line that clones the configured branch of the repository (its latest commit only),
    each value quoted (:func:`shlex.quote`; the values :func:`repository` lets through need none)."""
    url, branch = repository(config)
    return (f"!git clone --quiet --depth 1 --branch {shlex.quote(branch)} {shlex.quote(url)} "
            f"{shlex.quote(clone_folder(config))}")


def install_command(config: Path = CONFIG) -> str:
    """The ``%pip`` line that installs ``setfuncs`` with the chapters' extras from the clone, editable."""
    return f'%pip install --quiet -e "./{clone_folder(config)}[{",".join(EXTRAS)}]"'


def install_source(config: Path = CONFIG) -> str:
    """The cell's code: a no-op where ``setfuncs`` is importable, clone and install otherwise (the
    clone goes on ``sys.path`` too, so the running kernel imports it without a restart)."""
    return ("# Colab or a downloaded notebook: if setfuncs, the book's package, is missing, clone the book's\n"
            "# repository (the package and the committed results) and install setfuncs from the clone.\n"
            "import importlib.util\n"
            "import os\n"
            "import sys\n"
            "\n"
            'if importlib.util.find_spec("setfuncs") is None:\n'
            f"    {clone_command(config)}\n"
            f"    {install_command(config)}\n"
            f'    sys.path.insert(0, os.path.abspath("{clone_folder(config)}"))')


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
        return "the install cell differs from the one _config.yml gives"
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
    when ``_config.yml``'s ``repository:`` is refused (:func:`repository`), before any notebook is read."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="name every notebook whose install cell is out of date")
    action.add_argument("--write", action="store_true", help="insert or update the install cell in every notebook")
    args = parser.parse_args(argv)
    try:
        repository(CONFIG)
    except ValueError as error:
        parser.error(str(error))
    if args.write:
        for path in notebooks():
            if write(path):
                print(f"updated {_shown(path)}")
        return 0
    problems = check()
    print("\n".join(problems) or f"every notebook starts with the install cell: {install_command()}",
          file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
