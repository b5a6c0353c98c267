"""Where the book's committed files lie: the repository's ``results/`` folder.

The chapters, the scripts and the experiments read their results files from :data:`RESULTS_DIR`
through :func:`results_file`, which says how to get a file that is missing. This module is part of
the core so that the core (``setfuncs.runtime``) can find a file without importing the experiments
layer; :mod:`setfuncs.experiments.results` names the same three objects for the readers of results files.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RESULTS_DIR", "PAPER_RESULTS", "results_file"]

#: ``<repository>/results``, next to the ``setfuncs`` package of an editable install.
RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"
#: The file of the paper's numbers in :data:`RESULTS_DIR`.
PAPER_RESULTS = "paper-results.json"


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
            f"{path} does not exist. The results files are committed in the book's repository: "
            f"clone it and install setfuncs from the clone (`pip install -e .`, as `make setup` "
            f"does), or regenerate the file with the sweep command named in the chapter.")
    return path
