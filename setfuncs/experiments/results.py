"""Where the committed results files live, and the one reader of sweep results files.

Sweep commands write their JSON files into the repository's ``results/`` folder (with provenance);
the chapters find them with ``results_file`` (the core's :func:`setfuncs.repository.results_file`,
named here too, beside :data:`~setfuncs.repository.RESULTS_DIR` and
:data:`~setfuncs.repository.PAPER_RESULTS`, because every reader of results files starts here) and read them with their experiment's
``load_results``, which is :func:`load_sweep`: it names the file in every error and refuses,
before any table is computed, a file that is not JSON, holds another experiment, lacks a key its
table reads, or has no runs. ``results/paper-results.json`` holds a verbatim copy of the paper's
numbers with its provenance (written by ``scripts/copy_paper_results.py``); :func:`load_paper`
reads it.

**One order of runs.** A file lists its runs in the order they finished, which changes from one
sitting (or machine, or number of workers) to the next. Every reader of runs reads them in the order
of :func:`sorted_runs`, by configuration and seed, before it bootstraps, resamples, sums, takes a
median or picks the first of tied runs, so that the same runs give the same tables whatever their
order in the file (or in a results dict built in memory). :func:`load_sweep` keeps the file's order.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Sequence

from setfuncs.repository import PAPER_RESULTS, RESULTS_DIR, results_file

from .strictjson import restore_non_finite
from .schema import RunSchema, check_results, finished_runs, status_counts

__all__ = ["RESULTS_DIR", "PAPER_RESULTS", "HEADER_KEYS", "RUN_KEY", "results_file", "sorted_runs", "load_sweep",
           "load_paper", "provenance_rows"]

#: The header keys of every sweep's results file, the earlier ones (without ``identity`` and
#: ``sittings``) included: :func:`~setfuncs.experiments.provenance.sweep_provenance` and the engine write them.
HEADER_KEYS = ("experiment", "budget", "budget_parameters", "configurations", "seeds", "runs_per_configuration",
               "complete", "runs")
#: What names a run of a sweep's file, one record each (:func:`~setfuncs.experiments.schema.check_results`),
#: its configuration and its seed, and the order of :func:`sorted_runs`.
RUN_KEY = ("spec", "seed")


def sorted_runs(runs: dict | Iterable[dict], keys: Sequence[str] = RUN_KEY) -> list[dict]:
    """The runs of a results file (or a list of runs) ordered by the fields ``keys``, by default
    configuration then seed (:data:`RUN_KEY`), whatever order they finished in: the order in which
    every table, finding and figure reads them (see the module). A new list of the same records."""
    listed = runs["runs"] if isinstance(runs, dict) else runs
    return sorted(listed, key=lambda run: tuple(run[key] for key in keys))


def _why_not_json(data: bytes, error: ValueError) -> str:
    """Why ``data`` did not parse, in words: empty, not UTF-8, or where the JSON breaks off."""
    if not data.strip():
        return "the file is empty"
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text: {error}"
    return f"invalid or truncated JSON: {error}"


def _read_json(path: str | os.PathLike, fix: str) -> Any:
    """The JSON value in the file at ``path``; a ValueError naming the file, what is wrong and ``fix``."""
    data = Path(path).read_bytes()
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a JSON results file ({_why_not_json(data, err)}); {fix}") from err


def _holds(record: dict, key: str) -> bool:
    """Whether ``record`` has ``key``, a dotted path such as ``"budget_parameters.particles"``."""
    for part in key.split("."):
        if not isinstance(record, dict) or part not in record:
            return False
        record = record[part]
    return True


def _missing(record: dict, keys: Sequence[str]) -> list[str]:
    """The keys (dotted paths) of ``keys`` that ``record`` lacks, a key inside a missing one left out."""
    missing: list[str] = []
    for key in keys:
        if not _holds(record, key) and not any(key.startswith(f"{m}.") for m in missing):
            missing.append(key)
    return missing


def load_sweep(path: str | os.PathLike, experiment: str, package: str, schema: RunSchema = RunSchema(),
               header_keys: Sequence[str] = ()) -> dict:
    """A sweep's results file, checked before any table reads it; every error names the file.

    Args:
        path: the JSON file written by ``python -m <package> sweep``.
        experiment: the ``experiment`` the file must hold, e.g. ``"minimal_enclosing_circle"``.
        package: the experiment's module, e.g. ``"setfuncs.experiments.circle"``, named as the writer.
        schema: what every finished run holds (:class:`~setfuncs.experiments.schema.RunSchema`,
            the experiment's ``RUN_SCHEMA``), checked with
            :func:`~setfuncs.experiments.schema.check_results`: one record per configuration and
            seed, seeds non-negative ints, metrics numbers or the writer's non-finite form.
        header_keys: what the file must hold besides :data:`HEADER_KEYS`; a dotted key such as
            ``"budget_parameters.particles"`` names a key inside another.

    Non-finite floats written as ``null`` (:mod:`~setfuncs.experiments.resultsfile`) are NaN or
    infinite again; the runs keep the file's order (the order they finished in: readers order them
    with :func:`sorted_runs`). Raises ValueError if the file is not JSON (empty, truncated, binary),
    holds another experiment, lacks a header key, has no runs, or breaks the schema
    (:class:`~setfuncs.experiments.schema.SchemaError`, naming the run and the field).
    """
    writer = f"`python -m {package} sweep`"
    results = _read_json(path, f"pass a file written by {writer}")
    if not isinstance(results, dict) or not isinstance(results.get("runs"), list):
        raise ValueError(f"{path} is not a sweep results file (no list of 'runs'); pass a file written by {writer}")
    if results.get("experiment", experiment) != experiment:
        raise ValueError(f"{path} holds results of the {results['experiment']!r} experiment, not "
                         f"{experiment!r}; pass a file written by {writer}")
    missing = _missing(results, (*HEADER_KEYS, *header_keys))
    if missing:
        raise ValueError(f"{path} lacks {', '.join(missing)} of a results file of the {experiment!r} experiment; "
                         f"it was not written by {writer} of this version, or was edited: write it again with "
                         f"that command")
    if not results["runs"]:
        raise ValueError(f"{path} has no runs; run the sweep command first: {writer} (run again, it resumes "
                         f"the sweep in the file)")
    check_results(results, path, schema, f"the file was not written by {writer} of this version, or was "
                                         f"edited: write it again with that command")
    try:
        return restore_non_finite(results)
    except ValueError as err:
        raise ValueError(f"{path}: {err}; write it again with {writer}") from err


def load_paper(path: str | os.PathLike) -> dict:
    """The paper's numbers (the ``"paper"`` part of ``results/paper-results.json``); a ValueError
    naming the file for any other file (a sweep's results file is named as one)."""
    fix = (f"pass results/{PAPER_RESULTS}, written by `python scripts/copy_paper_results.py "
           f"PATH/TO/results.json`")
    record = _read_json(path, fix)
    if isinstance(record, dict) and "runs" in record:
        raise ValueError(f"{path} is a sweep's results file (experiment {record.get('experiment', '?')!r}), not the "
                         f"copy of the paper's numbers: {fix}")
    if not isinstance(record, dict) or set(record) != {"provenance", "paper"}:
        raise ValueError(f"{path} is not the copy of the paper's numbers: {fix}")
    return record["paper"]


def provenance_rows(results: dict, package: str) -> list[tuple[str, str]]:
    """How a sweep's file was made, as ``(what, value)`` rows for a chapter's table: the command, the
    git commits of the sittings that trained its runs, the runs (finished, diverged, collapsed,
    failed), whether it is complete, its wall time per sitting and engine, the machines of those
    sittings (each sitting's own where it records one, else the header's: the first sitting's) and
    the versions. ``package`` is
    the experiment's module, e.g. ``"setfuncs.experiments.circle"``. Where runs record the torch CPU
    kernels they trained with (``worker.cpu_capability``), a row counts the runs per kernel set."""
    counts = status_counts(results["runs"])
    sittings = results["sittings"]
    trained = [s for s in sittings if s.get("runs_added")] or sittings     # the sittings whose code made runs
    commands = list(dict.fromkeys(" ".join(["python -m", package, *s["command"][1:]]) for s in sittings))
    commits = list(dict.fromkeys(s["git_commit"] or "unknown" for s in trained))
    machines = list(dict.fromkeys(_machine(s.get("hardware") or results["hardware"]) for s in trained))
    times = "; ".join(f"{s['wall_seconds'] / 60:.0f} min on {s['engine'] or 'no engine'} "
                      f"({s['runs_added']} run{'s' * (s['runs_added'] != 1)})"
                      for s in sittings if s["wall_seconds"] is not None)
    return [
        ("command" + ("s" if len(commands) > 1 else ""), "; ".join(commands)),
        ("git commit" + ("s" if len(commits) > 1 else "") + " of the code", ", ".join(commits)),
        ("runs per configuration (seeds)", str(results["runs_per_configuration"])),
        ("runs: finished / diverged / collapsed / failed",
         f"{len(finished_runs(results)) - counts['diverged']} / {counts['diverged']} / {counts['collapsed']} / "
         f"{counts['failed']}"),
        ("complete", str(results["complete"])),
        ("wall time", f"{sum(s['wall_seconds'] or 0.0 for s in sittings) / 60:.0f} min in {len(sittings)} sitting"
                      f"{'s' if len(sittings) > 1 else ''}: {times}"),
        ("hardware", "; ".join(machines)),
        ("versions", ", ".join(f"{k} {v}" for k, v in results["versions"].items())),
    ] + _kernel_rows(results["runs"])


def _machine(hardware: dict) -> str:
    """A sitting's machine in words, e.g. ``"AMD EPYC, 2 cores, 1 torch thread per run"``."""
    return (f"{hardware['cpu_model']}, {hardware['cpu_count']} cores, {hardware['torch_threads_per_run']} torch "
            f"thread per run")


def _kernel_rows(runs: list[dict]) -> list[tuple[str, str]]:
    """``[("CPU kernels (runs)", "AVX2: 120; not recorded: 256")]``, or nothing where no run records
    its kernels (a file written before runs recorded them)."""
    kernels = Counter((run.get("worker") or {}).get("cpu_capability") or "not recorded" for run in runs)
    if set(kernels) <= {"not recorded"}:
        return []
    return [("CPU kernels (runs)", "; ".join(f"{name}: {count}" for name, count in sorted(kernels.items())))]
