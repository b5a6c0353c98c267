"""Command line of the minimal enclosing circle experiment (Section 4.1, Table 1 of the paper).

    python -m setfuncs.experiments.circle sweep --budget quick --runs 2 --jobs 2 --out results/circle-quick.json
    python -m setfuncs.experiments.circle table results/circle-quick.json [--paper results/paper-results.json]
"""

from __future__ import annotations

import argparse

from ..cli import (add_sweep_command, engine_of, existing_file, load_checked, positive_int, print_findings,
                   run_sweep_command)
from .sweep import BUDGETS, sweep
from ..findings import VARIANT_TITLES
from .findings import circle_findings
from .table import circle_table, format_table, load_results


def parser() -> argparse.ArgumentParser:
    """The ``sweep`` and ``table`` subcommands."""
    main = argparse.ArgumentParser(
        prog="python -m setfuncs.experiments.circle",
        description="Minimal enclosing circle experiment (Soelch et al. 2019, Section 4.1): train "
                    "the 36 paper configurations (4 plain/recurrent settings x 3x3 aggregations) and the 20 "
                    "with log-mean-exp in place of LSE, then "
                    "print Table 1.")
    commands = main.add_subparsers(dest="command", required=True, metavar="{sweep,table}")
    add_sweep_command(commands, "evaluate each on test sets of 5 to 100 particles", sorted(BUDGETS),
                      budget_help="quick: a few seconds per run; medium: 2,000 steps at width 64 "
                                  "(the committed sweep; the README gives its wall time); full: "
                                  "20,000 steps at width 128",
                      runs_help="runs (seeds) per configuration; the paper uses 20")
    show = commands.add_parser("table", help="print Table 1 from a results file",
                               description="Print Table 1 (best, radius, centre and median-best "
                                           "MSE per setting, ratios to plain/plain).")
    show.add_argument("results", type=existing_file, help="a JSON file written by `sweep`")
    show.add_argument("--paper", type=existing_file,
                      help="results/paper-results.json (the paper's numbers), to print its rows beside ours")
    show.add_argument("--batch-size", type=positive_int, default=20,
                      help="runs per bootstrap batch for the median best MSE (default: 20)")
    show.add_argument("--bootstraps", type=positive_int, default=1000,
                      help="bootstrap batches (default: 1000)")
    return main


def main(argv: list[str] | None = None) -> None:
    main_parser = parser()
    args = main_parser.parse_args(argv)
    if args.command == "sweep":
        engine = engine_of(args, main_parser)
        run_sweep_command(lambda: sweep(args.runs, BUDGETS[args.budget], args.out, args.configurations, engine,
                                        args.restart, progress=not args.no_progress), args.out)
    else:
        results = load_checked(load_results, args.results)
        for variant, title in VARIANT_TITLES.items():
            print(f"{title}\n{format_table(circle_table(results, args.batch_size, args.bootstraps, paper=args.paper, variant=variant))}\n")
        print_findings(lambda variant: circle_findings(results, args.paper, variant, args.batch_size, args.bootstraps))


if __name__ == "__main__":
    main()
