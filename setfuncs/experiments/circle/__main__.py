"""Minimal enclosing circle experiment (Soelch et al. 2019, Section 4.1): train the 36 paper
configurations (4 plain/recurrent settings x 3x3 aggregations) and the 20 with log-mean-exp in place of
LSE, then print Table 1.

    python -m setfuncs.experiments.circle sweep --budget quick --runs 2 --jobs 2 --out results/circle-quick.json
    python -m setfuncs.experiments.circle table results/circle-quick.json [--paper results/paper-results.json]
"""

from __future__ import annotations

import argparse
from functools import partial

from ..cli import CommandLine, SweepCommand, TableCommand, add_bootstrap_arguments, print_findings
from ..findings import VARIANT_TITLES
from .experiment import EXPERIMENT
from .table import circle_table, format_table


def show(results: dict, args: argparse.Namespace) -> None:
    """Print Table 1 from a results file: best, radius, centre and median-best MSE per setting, ratios to
    plain/plain, for both variants, then the paper's findings."""
    for variant, title in VARIANT_TITLES.items():
        table = circle_table(results, args.batch_size, args.bootstraps, paper=args.paper, variant=variant)
        print(f"{title}\n{format_table(table)}\n")
    print_findings(lambda: EXPERIMENT.findings(results, args.paper))


COMMAND_LINE = CommandLine(EXPERIMENT, __doc__,
                           SweepCommand("evaluate each on test sets of 5 to 100 particles",
                                        "runs (seeds) per configuration; the paper uses 20"),
                           TableCommand(show, aliases=(), arguments=partial(add_bootstrap_arguments, batch_size=20,
                                                                            statistic="the median best MSE")))
main = COMMAND_LINE.main


if __name__ == "__main__":
    main()
