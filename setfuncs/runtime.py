"""How long a chapter takes to run, as measured, for the line under each chapter's introduction.

The times come from ``results/benchmarks/chapter-times.json``, which ``python scripts/chapter_times.py``
writes: every chapter run whole in a fresh kernel with one thread, one chapter after another, with
the machine, its load, the commit and the date beside them. No chapter states a run time of its own.
"""

from __future__ import annotations

import json
from datetime import datetime

from .budget import budget
from .repository import results_file

__all__ = ["TIMES_FILE", "COMMAND", "run_time_line"]

#: The file of measured chapter times, in ``results/``.
TIMES_FILE = "benchmarks/chapter-times.json"
#: The command that measures every chapter and writes :data:`TIMES_FILE`.
COMMAND = "python scripts/chapter_times.py"


def run_time_line(chapter: str) -> str:
    """One short sentence on how long ``chapter`` (its file name without ``.ipynb``, e.g. ``"01_sets"``) took
    to run: its seconds in :data:`TIMES_FILE`, the budget, date and commit they were measured at (the
    machine and its load stay in the file); or that it is not measured yet, or failed when it was,
    naming :data:`COMMAND`.

    Raises a ValueError naming the file where it is not a chapter-times file (no JSON object with
    ``provenance`` and ``chapters``), and a FileNotFoundError
    (:func:`~setfuncs.repository.results_file`) where it is missing.
    """
    path = results_file(TIMES_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        provenance, chapters = data["provenance"], data["chapters"]
        hardware = provenance["hardware"]
        date = datetime.fromisoformat(provenance["date"])
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path} is not a chapter-times file ({err!r}); write it again with `{COMMAND}`") from err
    entry = chapters.get(chapter)
    if entry is None:
        return f"Run time: this chapter is not in {TIMES_FILE} yet; `{COMMAND}` measures every chapter."
    if entry.get("status") != "ok" or not isinstance(entry.get("seconds"), (int, float)):
        return (f"Run time: not known; this chapter failed when `{COMMAND}` last ran it "
                f"({entry.get('error', 'no error recorded')}).")
    measured = provenance.get("budget", "quick")
    other = "" if budget() == measured else f" This kernel runs the {budget()} budget, which takes far longer."
    return (f"Run time: {entry['seconds']:.0f} s on one core at the {measured} budget (measured "
            f"{date:%d %B %Y}, commit {str(provenance.get('git_commit', '?'))[:7]}).{other}")
