"""Where the committed results files live: the repository's ``results/`` folder.

Sweep commands write their JSON files there (with provenance); the chapters read them with
:func:`results_file`. ``results/paper-results.json`` is a verbatim copy of the paper's numbers.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RESULTS_DIR", "results_file"]

#: ``<repository>/results``, next to the ``setfuncs`` package of an editable install.
RESULTS_DIR = Path(__file__).resolve().parents[2] / "results"


def results_file(name: str) -> Path:
    """The path of ``results/<name>``; a FileNotFoundError that says how to get it if it is missing."""
    path = RESULTS_DIR / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist. The results files are committed in the book's repository: "
            f"clone it and install setfuncs from the clone (`pip install -e .`, as requirements.txt "
            f"does), or regenerate the file with the sweep command named in the chapter.")
    return path
