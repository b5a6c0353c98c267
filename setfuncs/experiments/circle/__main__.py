"""Command line of the minimal enclosing circle experiment (Section 4.1, Table 1 of the paper).

    python -m setfuncs.experiments.circle sweep --budget quick --runs 2 --jobs 2 --out results/circle-quick.json
    python -m setfuncs.experiments.circle table results/circle-quick.json [--paper shared/paper/results.json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .sweep import BUDGETS, all_configurations, spec_of, sweep
from .table import circle_table, format_table, load_results

SPECS = [spec_of(*c) for c in all_configurations()]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return path


def parser() -> argparse.ArgumentParser:
    """The ``sweep`` and ``table`` subcommands."""
    main = argparse.ArgumentParser(
        prog="python -m setfuncs.experiments.circle",
        description="Minimal enclosing circle experiment (Soelch et al. 2019, Section 4.1): train "
                    "the 36 configurations (4 plain/recurrent settings x 3x3 aggregations), then "
                    "print Table 1.")
    commands = main.add_subparsers(dest="command", required=True, metavar="{sweep,table}")
    run = commands.add_parser(
        "sweep", help="train every configuration RUNS times and write one JSON results file",
        description="Train RUNS seeds (0..RUNS-1) of every configuration in parallel worker "
                    "processes and write one JSON file with provenance (command, budget, seeds, "
                    "versions, hardware, timings). The file is rewritten after every finished run "
                    "('complete': false) so an interrupted sweep keeps its runs.")
    run.add_argument("--budget", choices=sorted(BUDGETS), required=True,
                     help="quick: a few seconds per run; medium: 2,000 steps at width 64 "
                          "(six seeds of all 36 in about an hour on two cores); full: 20,000 steps "
                          "at width 128")
    run.add_argument("--runs", type=_positive_int, required=True,
                     help="runs (seeds) per configuration; the paper uses 20")
    run.add_argument("--jobs", type=_positive_int, default=2,
                     help="worker processes, one torch thread each (default: 2)")
    run.add_argument("--out", type=Path, required=True, help="path of the JSON results file")
    run.add_argument("--configurations", nargs="+", choices=SPECS, metavar="SPEC",
                     help="only these model specs, e.g. max/max r-lse/r-lse (default: all 36)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    show = commands.add_parser("table", help="print Table 1 from a results file",
                               description="Print Table 1 (best, radius, centre and median-best "
                                           "MSE per setting, ratios to plain/plain).")
    show.add_argument("results", type=_existing_file, help="a JSON file written by `sweep`")
    show.add_argument("--paper", type=_existing_file,
                      help="the paper's results.json, to print its rows beside ours")
    show.add_argument("--batch-size", type=_positive_int, default=20,
                      help="runs per bootstrap batch for the median best MSE (default: 20)")
    show.add_argument("--bootstraps", type=_positive_int, default=1000,
                      help="bootstrap batches (default: 1000)")
    return main


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.command == "sweep":
        results = sweep(args.runs, BUDGETS[args.budget], args.jobs, args.out, args.configurations,
                        progress=not args.no_progress)
        print(f"{len(results['runs'])} runs in {results['wall_seconds']:.0f} s -> {args.out}")
    else:
        results = load_results(args.results)
        rows = circle_table(results, args.batch_size, args.bootstraps, paper=args.paper)
        if not results.get("complete"):
            print(f"note: {args.results} is an incomplete sweep", file=sys.stderr)
        print(format_table(rows))


if __name__ == "__main__":
    main()
