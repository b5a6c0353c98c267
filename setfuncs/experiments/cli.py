"""Command-line pieces every experiment shares: argument types and the ``sweep`` subcommand."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from .engine import Engine, SweepInterrupted
from .findings import VARIANT_TITLES, Finding, format_findings
from .resultsfile import SweepFileError, SweepLocked, SweepWriteError
from .sweeps import all_configurations, spec_of

__all__ = ["SPECS", "positive_int", "existing_file", "add_sweep_command", "engine_of", "run_sweep_command",
           "load_checked", "print_findings"]

#: The 56 model specs a circle or mixture sweep can run: the paper's 36 and the 20 with log-mean-exp.
SPECS = [spec_of(*c) for c in all_configurations()]


def positive_int(text: str) -> int:
    """An argparse type: a positive integer, or a message saying what was given."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def existing_file(text: str) -> Path:
    """An argparse type: the path of a file that exists."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return path


def add_sweep_command(commands: argparse._SubParsersAction, what: str, budgets: list[str],
                      budget_help: str, runs_help: str, specs: Sequence[str] = tuple(SPECS)
                      ) -> argparse.ArgumentParser:
    """Add the ``sweep`` subcommand: ``--budget --runs --out --configurations``, where the runs train
    (``--jobs --scheduler --device --dashboard``), ``--restart`` and ``--no-progress``.

    ``what`` says what a run does besides training (e.g. "score each against EM"), inserted into
    the description; ``specs`` are the model specs ``--configurations`` accepts (default: the 56
    of :data:`SPECS`; the point-cloud sweep passes Table 2's ten).
    """
    run = commands.add_parser(
        "sweep", help="train every configuration RUNS times and write one JSON results file",
        description=f"Train RUNS seeds (0..RUNS-1) of every configuration on a Dask cluster, {what}, and "
                    f"write one JSON file with provenance (command, git commit, budget, seeds, versions, "
                    f"hardware, timings) after every finished run. Running the same command again "
                    f"resumes the sweep: the runs in --out are kept and only the missing ones train.",
        epilog="Ctrl-C stops the sweep within seconds and keeps the finished runs. Exit status: 0 when "
               "every run finished, 1 when a run failed (its error and traceback are in the file; the "
               "same command retries it) or the file could not be written, 2 for a bad argument, a "
               "file that cannot be resumed or one another sweep is writing, 130 when interrupted.")
    run.add_argument("--budget", choices=budgets, required=True, help=budget_help)
    run.add_argument("--runs", type=positive_int, required=True, help=runs_help)
    run.add_argument("--out", type=Path, required=True,
                     help="the JSON results file; resumed when it holds runs of the same experiment and budget")
    run.add_argument("--configurations", nargs="+", choices=list(specs), metavar="SPEC",
                     help=f"only these model specs, e.g. max/max r-lse/r-lse (default: all {len(specs)})")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=positive_int,
                       help="worker processes of the local Dask cluster, one torch thread each (default: 2)")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="use the running Dask cluster at ADDRESS (e.g. tcp://10.0.0.5:8786) instead of a "
                            "local one; start it with `dask scheduler` and `dask worker ADDRESS --nthreads 1`")
    run.add_argument("--device", default="cpu", metavar="{cpu,cuda,cuda:N,auto}",
                     help="where the runs train, recorded with every run (default: cpu; auto: the GPU when "
                          "there is one, else the CPU)")
    run.add_argument("--dashboard", action="store_true",
                     help="serve the local cluster's dashboard on http://localhost:8787 (needs bokeh)")
    run.add_argument("--restart", action="store_true",
                     help="move an existing --out aside to <out>.<UTC time>.bak and start afresh "
                          "(nothing is deleted)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    return run


def engine_of(args: argparse.Namespace, command: argparse.ArgumentParser) -> Engine:
    """The :class:`~setfuncs.experiments.engine.Engine` of ``sweep``'s arguments (a usage error if invalid)."""
    try:
        return Engine(jobs=2 if args.jobs is None else args.jobs, scheduler=args.scheduler, device=args.device,
                      dashboard=args.dashboard)
    except ValueError as err:
        command.error(f"--device: {err}" if "device" in str(err) else str(err))


def run_sweep_command(run: Callable[[], dict], out: Path) -> None:
    """Run a sweep and report how it ended; exit 1 if a run failed or the file could not be written,
    2 if the file cannot be resumed or is locked, 130 on Ctrl-C or SIGTERM.

    Prints ``144 runs in 3298 s -> results/x.json`` (the file's runs and its summed wall time).
    """
    try:
        results = run()
    except SweepInterrupted as stop:
        print(f"\ninterrupted: {stop}", file=sys.stderr)
        sys.exit(130)
    except (SweepFileError, SweepLocked) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except SweepWriteError as err:
        print(f"error: {err}; the file keeps every run written before", file=sys.stderr)
        sys.exit(1)
    sitting = results["sittings"][-1]
    print(f"{len(results['runs'])} runs in {results['wall_seconds']:.0f} s -> {out} "
          f"(this sitting: {sitting['runs_added']} new, {sitting['kept_runs']} kept, {sitting['failed_runs']} failed)")
    if sitting["failed_runs"]:
        failed = sitting["failed_runs"]
        print(f"error: {failed} run{'s' if failed > 1 else ''} failed; the errors and tracebacks are in {out}. "
              f"Run the same command to retry {'them' if failed > 1 else 'it'}.", file=sys.stderr)
        sys.exit(1)


def load_checked(load: Callable[[Path], dict], path: Path) -> dict:
    """``load(path)``, with a note on stderr when the sweep that wrote it did not finish."""
    results = load(path)
    if not results.get("complete"):
        print(f"note: {path} is an incomplete sweep", file=sys.stderr)
    return results


def print_findings(compute: Callable[[str], list[Finding]]) -> None:
    """Print the paper's findings with intervals and verdicts, ``compute(variant)`` for both variants
    (:data:`~setfuncs.experiments.findings.VARIANT_TITLES`); a variant whose runs cannot decide them
    (a configuration without usable runs, as in a partial sweep) is named with the reason."""
    for variant, title in VARIANT_TITLES.items():
        print(f"\nfindings, {title}:")
        try:
            print(format_findings(compute(variant)))
        except ValueError as err:
            print(f"not computed: {err}")
