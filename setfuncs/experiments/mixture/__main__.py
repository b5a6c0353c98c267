"""Mixture weights experiment (Soelch et al. 2019, Section 4.2): train the 36 paper configurations
(4 plain/recurrent settings x 3x3 aggregations) and the 20 with log-mean-exp in place of LSE to output a
Beta distribution over the smaller weight of a 2-component Gaussian mixture, score them against EM,
then print the peak-performance table of Figure 4b.

    python -m setfuncs.experiments.mixture sweep --budget quick --runs 2 --jobs 2 --out results/mixture-quick.json
    python -m setfuncs.experiments.mixture table results/mixture-quick.json [--paper results/paper-results.json]
"""

from __future__ import annotations

import argparse
from functools import partial

from ..cli import CommandLine, SweepCommand, TableCommand, add_bootstrap_arguments, print_findings
from ..findings import VARIANT_TITLES
from .experiment import EXPERIMENT
from .table import by_population_size, format_table, mixture_table


def show(results: dict, args: argparse.Namespace) -> None:
    """Print the peak-performance table from a results file: per aggregation group (equivariant or
    final; plain or recurrent), the best metric in bootstrap batches of runs (Figure 4b's violins), then
    the metric per population size, for both variants, and the paper's findings."""
    print("metric = log p_EM(w) - log p_model(w) at n = 100, median over test populations (negative: EM is "
          "outperformed)")
    for variant, title in VARIANT_TITLES.items():
        print(f"\n{title}\n{format_table(mixture_table(results, args.batch_size, args.bootstraps, variant=variant))}")
        print("median metric over runs by population size n")
        for row in by_population_size(results, variant):
            values = "  ".join(f"{n}: {m:.3g}" for n, m in zip(row["sizes"], row["median"]))
            print(f"{row['setting']:<20} {values}")
    print_findings(lambda: EXPERIMENT.findings(results, args.paper))


COMMAND_LINE = CommandLine(EXPERIMENT, __doc__,
                           SweepCommand("score each against EM on fixed test populations",
                                        "runs (seeds) per configuration; the violins bootstrap batches of 5"),
                           TableCommand(show, arguments=partial(add_bootstrap_arguments, batch_size=5,
                                                                statistic="the peak performance")))
main = COMMAND_LINE.main


if __name__ == "__main__":
    main()
