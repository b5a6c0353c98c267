"""Where the committed results files live: the repository's ``results/`` folder.

Sweep commands write their JSON files there (with provenance); the chapters read them with
:func:`results_file`. ``results/paper-results.json`` holds a verbatim copy of the paper's numbers
with its provenance (written by ``scripts/copy_paper_results.py``); :func:`load_paper` reads it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["RESULTS_DIR", "PAPER_RESULTS", "results_file", "load_sweep", "load_paper", "provenance_rows"]

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


def provenance_rows(results: dict, package: str) -> list[tuple[str, str]]:
    """How a sweep's file was made, as ``(what, value)`` rows for a chapter's table: the command, the
    git commits of its sittings, the runs (finished, diverged, collapsed, failed), whether it is
    complete, its wall time per sitting and engine, the hardware and the versions. ``package`` is
    the experiment's module, e.g. ``"setfuncs.experiments.circle"``."""
    runs = [r for r in results["runs"] if "failure" not in r]
    sittings = results["sittings"]
    commands = list(dict.fromkeys(" ".join(["python -m", package, *s["command"][1:]]) for s in sittings))
    commits = list(dict.fromkeys(s["git_commit"] or "unknown" for s in sittings))
    times = "; ".join(f"{s['wall_seconds'] / 60:.0f} min on {s['engine'] or 'no engine'} ({s['runs_added']} runs)"
                      for s in sittings if s["wall_seconds"] is not None)
    hardware = results["hardware"]
    return [
        ("command" + ("s" if len(commands) > 1 else ""), "; ".join(commands)),
        ("git commit of the code" + ("s" if len(commits) > 1 else ""), ", ".join(commits)),
        ("runs per configuration (seeds)", str(results["runs_per_configuration"])),
        ("runs: finished / diverged / collapsed / failed",
         f"{sum(r.get('error') is None for r in runs)} / {sum(r.get('error') is not None for r in runs)} / "
         f"{sum(bool(r.get('collapsed')) for r in runs)} / {len(results['runs']) - len(runs)}"),
        ("complete", str(results["complete"])),
        ("wall time", f"{sum(s['wall_seconds'] or 0.0 for s in sittings) / 60:.0f} min in {len(sittings)} sitting"
                      f"{'s' if len(sittings) > 1 else ''}: {times}"),
        ("hardware", f"{hardware['cpu_model']}, {hardware['cpu_count']} cores, "
                     f"{hardware['torch_threads_per_run']} torch thread per run"),
        ("versions", ", ".join(f"{k} {v}" for k, v in results["versions"].items())),
    ]
