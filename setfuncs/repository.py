"""Where the book's committed files lie: the repository's ``results/`` folder, or its copy in the package.

The chapters, the scripts and the experiments read their results files from :data:`RESULTS_DIR`
through :func:`results_file`, which says how to get a file that is missing. :data:`RESULTS_DIR` is

* ``<repository>/results`` where ``setfuncs`` lies in a source checkout (a clone, ``make setup``'s
  editable install, Binder): the folder ``results/`` beside the package, next to ``pyproject.toml``;
* ``setfuncs/results`` inside the installed package otherwise: the wheel that the book's site serves
  (``scripts/wheel.py``; every chapter's first cell installs it, ``scripts/install_cell.py``) carries
  the results files the chapters read as package data, and no notebook.

This module is part of the core so that the core (``setfuncs.runtime``) can find a file without
importing the experiments layer; :mod:`setfuncs.experiments.results` names the same three objects
for the readers of results files.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RESULTS_DIR", "PAPER_RESULTS", "results_dir", "results_file"]

#: The file of the paper's numbers in :data:`RESULTS_DIR`.
PAPER_RESULTS = "paper-results.json"


def results_dir(package: Path) -> Path:
    """The results folder for the ``setfuncs`` package folder ``package``: the repository's
    ``results/`` where ``package`` sits in a source checkout (``results/`` and ``pyproject.toml``
    beside it; ``site-packages`` has no ``pyproject.toml``), else the package's own ``results/``."""
    checkout = package.parent
    if (checkout / "results").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout / "results"
    return package / "results"


#: ``<repository>/results`` in a source checkout, else ``setfuncs/results`` of an installed wheel
#: (:func:`results_dir`).
RESULTS_DIR = results_dir(Path(__file__).resolve().parent)


def results_file(name: str) -> Path:
    """The path of ``results/<name>``; a ValueError for an empty name or a folder, and a
    FileNotFoundError that says how to get the file if it is missing."""
    if not name:
        raise ValueError(f"results_file(name): name is empty; pass the name of a file in {RESULTS_DIR}, "
                         f"e.g. {PAPER_RESULTS!r}")
    path = RESULTS_DIR / name
    if path.is_dir():
        raise ValueError(f"results_file(name): {name!r} names the folder {path}, not a file; pass the name of a "
                         f"file in it")
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist. The results files are committed in the book's repository and shipped "
            f"in the setfuncs wheel the book's site serves: in a clone, install setfuncs from it "
            f"(`pip install -e .`, as `make setup` does); elsewhere, run the chapter's first cell, which "
            f"installs the wheel (SETFUNCS_WHEEL_URL names another copy); or regenerate the file with the "
            f"sweep command named in the chapter.")
    return path
