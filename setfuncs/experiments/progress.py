r"""How far a sweep is, and how long its missing runs take at the rate its own runs were measured.

A results file records, for every finished run, the seconds one worker spent training and
evaluating it (``train_seconds``, ``eval_seconds``), and for every sitting its wall time and its
engine. :func:`sweep_progress` reads them: which of the planned runs (every configuration with seeds
``0 .. runs-1``) are finished, and what the missing ones cost. A missing run of configuration
:math:`c` is taken to cost the median over the file's finished runs of :math:`c`,

.. math:: t_c = \operatorname{median}_s \left(t^{\text{train}}_{c,s} + t^{\text{eval}}_{c,s}\right),

(the median over all finished runs where :math:`c` has none), so that :math:`J` workers need about

.. math:: T_{\text{left}} \approx \frac{1}{J} \sum_{(c, s)\ \text{missing}} t_c .

The estimate assumes the machine the runs were measured on, as loaded as it was then (a run that
shared its core with other work took longer), and leaves out a sitting's start-up and its last,
half-idle minutes; the sittings' own rates, runs per hour of wall time with their number of
workers, are given beside it to judge how far to trust it. Failed runs (``failure``: a resumed
sweep runs them again) count as missing. When the machine or the code got faster between sittings
(the point-cloud rerun's workers kept their memory from commit 021d750 on and trained about twice
as fast), the medians over every run plan for the old speed: ``since`` measures them on the runs
of the sittings from that one on (a run records its sitting, ``provenance.sitting``), counting
every finished run as finished.

``python -m setfuncs.experiments.progress FILE [--runs N] [--jobs J] [--since-sitting K]`` prints
it, with the seeds every configuration has finished
(:meth:`~setfuncs.experiments.progress.Progress.seeds`: the findings pair
configurations by seed, so a seed one configuration lacks counts for none of its comparisons);
``--runs`` asks about more seeds than the file's sweep planned (the next sweep with that ``--runs``).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .cli import existing_file, parse_positive_int
from .results import load_sweep
from .schema import finished_runs, run_status

__all__ = ["WRITERS", "SittingRate", "Progress", "sweep_progress", "format_progress", "main"]

#: The module whose ``sweep`` command writes the files of each experiment.
WRITERS = {"minimal_enclosing_circle": "setfuncs.experiments.circle",
           "gmm_mixture_weights": "setfuncs.experiments.mixture",
           "point_cloud_classification": "setfuncs.experiments.pointcloud",
           "spatial_attention": "setfuncs.experiments.attention"}


@dataclass(frozen=True)
class SittingRate:
    """One sitting: its workers (None where its engine does not say), wall time and runs added."""

    workers: int | None
    wall_seconds: float
    runs_added: int

    @property
    def runs_per_hour(self) -> float:
        return 3600.0 * self.runs_added / self.wall_seconds if self.wall_seconds > 0 else float("nan")


@dataclass(frozen=True)
class Progress:
    """What :func:`sweep_progress` finds (seconds are one worker's)."""

    planned: int
    finished: int
    failed: int
    missing: tuple[tuple[str, int], ...]
    seconds_per_run: dict[str, float]
    seconds_left: float
    seconds_whole: float
    sittings: tuple[SittingRate, ...]
    since: int = 0
    measured_runs: int = 0

    def seeds(self, configurations: int) -> tuple[list[int], dict[int, int]]:
        """The seeds every one of ``configurations`` has finished, and the seeds some but not all have
        finished with how many (the paired findings can use only the first)."""
        seeds = self.planned // configurations
        left = {seed: 0 for seed in range(seeds)}
        for _, seed in self.missing:
            left[seed] += 1
        return ([seed for seed in range(seeds) if not left[seed]],
                {seed: configurations - n for seed, n in left.items() if 0 < n < configurations})

    def hours_left(self, jobs: int) -> float:
        """About how many hours of wall time ``jobs`` workers need for the missing runs."""
        return self.seconds_left / jobs / 3600.0

    def hours_whole(self, jobs: int) -> float:
        """About how many hours ``jobs`` workers need for every planned run, from an empty file."""
        return self.seconds_whole / jobs / 3600.0


def _workers(engine: object) -> int | None:
    """The number of workers in a sitting's engine description (``"dask …, LocalCluster(2)"``)."""
    found = re.search(r"LocalCluster\((\d+)\)", engine) if isinstance(engine, str) else None
    return int(found.group(1)) if found else None


def _run_seconds(run: dict) -> float | None:
    """What one worker spent on a finished run (training and evaluation), None where unrecorded."""
    train, evaluate = run.get("train_seconds"), run.get("eval_seconds") or 0.0
    return None if not isinstance(train, (int, float)) else float(train) + float(evaluate)


def sweep_progress(results: dict, runs: int | None = None, since: int = 0) -> Progress:
    """The runs of ``results`` (a loaded results file) against the plan of ``runs`` seeds per
    configuration (None: the file's ``runs_per_configuration``): how many are finished or failed,
    which are missing, each configuration's median seconds per run over the finished runs of
    sittings ``since`` and later (0: every run), and the seconds the missing runs and the whole plan
    need at those rates (see the module). A ValueError if no such run records its seconds (nothing
    to measure a rate by), or if ``since`` names no sitting of the file."""
    runs = results["runs_per_configuration"] if runs is None else runs
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive int of seeds per configuration, got {runs!r}")
    sittings_recorded = len(results.get("sittings", []))
    if isinstance(since, bool) or not isinstance(since, int) or not 0 <= since < max(sittings_recorded, 1):
        raise ValueError(f"since must name one of the file's sittings, 0 to {max(sittings_recorded - 1, 0)}, "
                         f"got {since!r}")
    if not results["configurations"]:
        raise ValueError("the file names no configurations: there is no plan to measure against")
    planned = [(spec, seed) for seed in range(runs) for spec in results["configurations"]]
    done = finished_runs(results)
    measured: dict[str, list[float]] = {}
    for run in done:
        seconds = _run_seconds(run)
        if seconds is not None and (since == 0 or run.get("provenance", {}).get("sitting", -1) >= since):
            measured.setdefault(run["spec"], []).append(seconds)
    if not measured:
        which = "" if since == 0 else f" in sitting {since} or later"
        raise ValueError(f"no finished run{which} records train_seconds: there is no rate to project by")
    overall = statistics.median(s for values in measured.values() for s in values)
    per_run = {spec: statistics.median(measured[spec]) if spec in measured else overall
               for spec in results["configurations"]}
    finished = {(r["spec"], r["seed"]) for r in done}
    missing = tuple(key for key in planned if key not in finished)
    sittings = tuple(SittingRate(_workers(s.get("engine")), float(s.get("wall_seconds") or 0.0),
                                 int(s.get("runs_added") or 0)) for s in results.get("sittings", []))
    return Progress(planned=len(planned), finished=len(set(planned) & finished),
                    failed=sum(run_status(r) == "failed" for r in results["runs"]), missing=missing,
                    seconds_per_run=per_run, seconds_left=sum(per_run[spec] for spec, _ in missing),
                    seconds_whole=sum(per_run[spec] for spec, _ in planned), sittings=sittings, since=since,
                    measured_runs=sum(len(values) for values in measured.values()))


def _workers_phrase(n: int) -> str:
    return f"{n} worker{'s' if n != 1 else ''}"


def _rates(sittings: Sequence[SittingRate]) -> list[str]:
    """One phrase per number of workers: the sittings' runs per hour of wall time."""
    phrases = []
    for workers in sorted({s.workers for s in sittings if s.runs_added}, key=lambda w: (w is None, w)):
        rates = sorted(s.runs_per_hour for s in sittings if s.workers == workers and s.runs_added)
        who = "workers unknown" if workers is None else _workers_phrase(workers)
        span = f"{rates[0]:.1f}" if len(rates) == 1 else f"{rates[0]:.1f} to {rates[-1]:.1f}"
        phrases.append(f"{who}: {span} runs per hour of wall ({len(rates)} sitting{'s' if len(rates) != 1 else ''})")
    return phrases


def format_progress(path: str, results: dict, progress: Progress, jobs: int) -> str:
    """What ``python -m setfuncs.experiments.progress`` prints for ``results`` read from ``path``."""
    configurations = len(results["configurations"])
    lines = [f"{path}: {results['experiment']}, {results['budget']} budget, {configurations} configurations x "
             f"{progress.planned // configurations} seeds",
             f"finished: {progress.finished} of {progress.planned} runs"
             + (f" ({progress.failed} failed, to run again)" if progress.failed else "")]
    complete, partial = progress.seeds(configurations)
    lines.append(f"seeds finished by every configuration: {len(complete)} of {progress.planned // configurations}"
                 + (f" ({', '.join(map(str, complete))})" if complete else "")
                 + "".join(f"; seed {seed}: {n} of {configurations}" for seed, n in partial.items()))
    costs = sorted(progress.seconds_per_run.values())
    last = len(progress.sittings) - 1
    which = f"sitting {last}" if progress.since == last else f"sittings {progress.since} to {last}"
    over = "" if progress.since == 0 else f", over the {progress.measured_runs} runs of {which}"
    lines.append(f"measured seconds per run (training and evaluation, one worker, median by configuration{over}): "
                 f"{costs[0]:.0f} to {costs[-1]:.0f}")
    lines += [f"sittings: {phrase}" for phrase in _rates(progress.sittings)]
    left = len(progress.missing)
    lines.append(f"left: {left} runs, about {progress.seconds_left / 3600:.1f} h of one worker: about "
                 f"{progress.hours_left(jobs):.1f} h with {_workers_phrase(jobs)}"
                 if left else "left: none; the sweep is complete")
    lines.append(f"all {progress.planned} runs from an empty file: about {progress.hours_whole(jobs):.1f} h with "
                 f"{_workers_phrase(jobs)}")
    lines.append("(at the rates these runs were measured at, on the machine that ran them; start-up not counted)")
    return "\n".join(lines)


def _load(path: Path) -> dict:
    """The results file at ``path`` of an experiment of :data:`WRITERS`, checked by
    :func:`~setfuncs.experiments.results.load_sweep`; a ValueError naming the file otherwise."""
    fix = "pass a results file written by an experiment's sweep command (python -m setfuncs.experiments.<name> sweep)"
    try:
        header = json.loads(path.read_bytes())
    except ValueError as err:          # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"{path} is not JSON ({err}); {fix}") from err
    experiment = header.get("experiment") if isinstance(header, dict) else None
    if experiment not in WRITERS:
        raise ValueError(f"{path} is not a results file of {', '.join(sorted(WRITERS))} (its experiment: "
                         f"{experiment!r}); {fix}")
    return load_sweep(path, experiment, WRITERS[experiment])


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``FILE [--runs N] [--jobs J] [--since-sitting K]``; prints :func:`format_progress`, or exits with 2 and
    a message that names the file."""
    parser = argparse.ArgumentParser(prog="python -m setfuncs.experiments.progress",
                                     description="How far a sweep's results file is, and how long its missing runs "
                                                 "take at the rate its own runs were measured.")
    parser.add_argument("file", type=existing_file, help="a results file written by an experiment's sweep command")
    parser.add_argument("--runs", type=parse_positive_int, default=None,
                        help="seeds per configuration to plan for (default: the file's runs_per_configuration)")
    parser.add_argument("--jobs", type=parse_positive_int, default=2, help="workers of the sweep (default 2)")
    parser.add_argument("--since-sitting", type=int, default=0, metavar="K",
                        help="measure the rates on the runs of sittings K and later (0 is the first; the file's "
                             "'sittings' lists them), e.g. those since a speed-up or on this machine (default 0: every run)")
    args = parser.parse_args(argv)
    try:
        results = _load(args.file)
        progress = sweep_progress(results, args.runs, args.since_sitting)
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    print(format_progress(str(args.file), results, progress, args.jobs))
    return 0

if __name__ == "__main__":
    sys.exit(main())
