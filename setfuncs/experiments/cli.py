"""Command-line pieces every experiment shares: argument types and the ``sweep`` subcommand."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from .sweeps import all_configurations, spec_of

__all__ = ["SPECS", "positive_int", "existing_file", "add_sweep_command", "report_sweep", "load_checked"]

#: The 36 model specs a sweep can run.
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
    """Add the ``sweep`` subcommand: ``--budget --runs --jobs --out --configurations --no-progress``.

    ``what`` says what a run does besides training (e.g. "score each against EM"), inserted into
    the description; ``specs`` are the model specs ``--configurations`` accepts (default: the 36
    of :data:`SPECS`; the point-cloud sweep passes Table 2's ten).
    """
    run = commands.add_parser(
        "sweep", help="train every configuration RUNS times and write one JSON results file",
        description=f"Train RUNS seeds (0..RUNS-1) of every configuration in parallel worker "
                    f"processes, {what}, and write one JSON file with provenance (command, git "
                    f"commit, budget, seeds, versions, hardware, timings). The file is rewritten "
                    f"after every finished run ('complete': false) so an interrupted sweep keeps "
                    f"its runs.")
    run.add_argument("--budget", choices=budgets, required=True, help=budget_help)
    run.add_argument("--runs", type=positive_int, required=True, help=runs_help)
    run.add_argument("--jobs", type=positive_int, default=2,
                     help="worker processes, one torch thread each (default: 2)")
    run.add_argument("--out", type=Path, required=True, help="path of the JSON results file")
    run.add_argument("--configurations", nargs="+", choices=list(specs), metavar="SPEC",
                     help=f"only these model specs, e.g. max/max r-lse/r-lse (default: all {len(specs)})")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    return run


def report_sweep(results: dict, out: Path) -> None:
    """Print what a finished sweep wrote: ``144 runs in 3298 s -> results/x.json``."""
    print(f"{len(results['runs'])} runs in {results['wall_seconds']:.0f} s -> {out}")


def load_checked(load: Callable[[Path], dict], path: Path) -> dict:
    """``load(path)``, with a note on stderr when the sweep that wrote it did not finish."""
    results = load(path)
    if not results.get("complete"):
        print(f"note: {path} is an incomplete sweep", file=sys.stderr)
    return results
