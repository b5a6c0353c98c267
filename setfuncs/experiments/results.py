"""Where the committed results files live: the repository's ``results/`` folder.

Sweep commands write their JSON files there (with provenance); the chapters read them with
:func:`results_file`. ``results/paper-results.json`` holds a verbatim copy of the paper's numbers
with its provenance (written by ``scripts/copy_paper_results.py``); :func:`load_paper` reads it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["RESULTS_DIR", "PAPER_RESULTS", "results_file", "load_sweep", "load_paper"]

#: ``<repository>/results``, next to the ``setfuncs`` package of an editable install.
RESULTS_DIR = Path(__file__).resolve().parents[2] / "results"
#: The file of the paper's numbers in :data:`RESULTS_DIR`.
PAPER_RESULTS = "paper-results.json"


def results_file(name: str) -> Path:
    """The path of ``results/<name>``; a FileNotFoundError that says how to get it if it is missing."""
    path = RESULTS_DIR / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist. The results files are committed in the book's repository: "
            f"clone it and install setfuncs from the clone (`pip install -e .`, as requirements.txt "
            f"does), or regenerate the file with the sweep command named in the chapter.")
    return path


def load_sweep(path: str | os.PathLike, experiment: str | None, package: str) -> dict:
    """A sweep's results file; a ValueError if it has no runs or holds another ``experiment`` (the
    file's field, when it has one; None: any), naming ``python -m <package> sweep`` as its writer."""
    with open(path) as f:
        results = json.load(f)
    if not isinstance(results, dict) or "runs" not in results:
        raise ValueError(f"{path} is not a sweep results file (no 'runs')")
    if experiment is not None and results.get("experiment", experiment) != experiment:
        raise ValueError(f"{path} holds results of the {results['experiment']!r} experiment, not "
                         f"{experiment!r}; pass a file written by `python -m {package} sweep`")
    return results


def load_paper(path: str | os.PathLike) -> dict:
    """The paper's numbers (the ``"paper"`` part of ``results/paper-results.json``); a ValueError
    for any other file."""
    with open(path) as f:
        record = json.load(f)
    if not isinstance(record, dict) or set(record) != {"provenance", "paper"}:
        raise ValueError(f"{path} is not the copy of the paper's numbers: pass results/{PAPER_RESULTS}, "
                         f"written by `python scripts/copy_paper_results.py PATH/TO/results.json`")
    return record["paper"]
