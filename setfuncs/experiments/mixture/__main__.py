"""Command line of the mixture-weights experiment (Section 4.2, Figure 3 of the paper).

    python -m setfuncs.experiments.mixture sweep --budget quick --runs 2 --jobs 2 --out results/mixture-quick.json
    python -m setfuncs.experiments.mixture table results/mixture-quick.json [--paper shared/paper/results.json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from setfuncs.experiments.circle.__main__ import _existing_file, _positive_int

from .sweep import BUDGETS, all_configurations, spec_of, sweep
from .table import by_population_size, format_table, load_results, mixture_table, paper_findings

SPECS = [spec_of(*c) for c in all_configurations()]


def parser() -> argparse.ArgumentParser:
    """The ``sweep`` and ``table`` (alias ``summary``) subcommands."""
    main = argparse.ArgumentParser(
        prog="python -m setfuncs.experiments.mixture",
        description="Mixture weights experiment (Soelch et al. 2019, Section 4.2): train the 36 "
                    "configurations (4 plain/recurrent settings x 3x3 aggregations) to output a "
                    "Beta distribution over the smaller weight of a 2-component Gaussian mixture, "
                    "score them against EM, then print the peak-performance table of Figure 3b.")
    commands = main.add_subparsers(dest="command", required=True, metavar="{sweep,table,summary}")
    run = commands.add_parser(
        "sweep", help="train every configuration RUNS times and write one JSON results file",
        description="Train RUNS seeds (0..RUNS-1) of every configuration in parallel worker "
                    "processes, score each against EM on fixed test populations and write one JSON "
                    "file with provenance (command, budget, seeds, versions, hardware, timings). The "
                    "file is rewritten after every finished run ('complete': false) so an "
                    "interrupted sweep keeps its runs.")
    run.add_argument("--budget", choices=sorted(BUDGETS), required=True,
                     help="quick: a few seconds per run; medium: 2,500 steps at width 48 (five "
                          "seeds of all 36 in about an hour on two cores); full: 20,000 steps at "
                          "width 128")
    run.add_argument("--runs", type=_positive_int, required=True,
                     help="runs (seeds) per configuration; the violins bootstrap batches of 5")
    run.add_argument("--jobs", type=_positive_int, default=2,
                     help="worker processes, one torch thread each (default: 2)")
    run.add_argument("--out", type=Path, required=True, help="path of the JSON results file")
    run.add_argument("--configurations", nargs="+", choices=SPECS, metavar="SPEC",
                     help="only these model specs, e.g. max/max r-lse/r-lse (default: all 36)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    show = commands.add_parser("table", aliases=["summary"],
                               help="print the peak-performance table from a results file",
                               description="Print, per aggregation group (equivariant or final; "
                                           "plain or recurrent), the distribution of the best "
                                           "metric in bootstrap batches of runs (Figure 3b's "
                                           "violins), then the metric per population size.")
    show.add_argument("results", type=_existing_file, help="a JSON file written by `sweep`")
    show.add_argument("--paper", type=_existing_file,
                      help="the paper's results.json, to print its findings below ours")
    show.add_argument("--batch-size", type=_positive_int, default=5,
                      help="runs per bootstrap batch for the peak performance (default: 5)")
    show.add_argument("--bootstraps", type=_positive_int, default=1000,
                      help="bootstrap batches (default: 1000)")
    return main


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.command == "sweep":
        results = sweep(args.runs, BUDGETS[args.budget], args.jobs, args.out, args.configurations,
                        progress=not args.no_progress)
        print(f"{len(results['runs'])} runs in {results['wall_seconds']:.0f} s -> {args.out}")
        return
    results = load_results(args.results)
    if not results.get("complete"):
        print(f"note: {args.results} is an incomplete sweep", file=sys.stderr)
    print("metric = log p_EM(w) - log p_model(w) at n = 100 (negative: EM is outperformed)")
    print(format_table(mixture_table(results, args.batch_size, args.bootstraps)))
    print("\nmedian metric over runs by population size n")
    for row in by_population_size(results):
        values = "  ".join(f"{n}: {m:.3g}" for n, m in zip(row["sizes"], row["median"]))
        print(f"{row['setting']:<20} {values}")
    if args.paper is not None:
        print("\nthe paper's findings:")
        for finding in paper_findings(args.paper):
            print(f"- {finding}")


if __name__ == "__main__":
    main()
