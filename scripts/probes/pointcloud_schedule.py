"""Adam's epsilon and the learning-rate decay points of the point-cloud MEDIUM budget, measured on
the column the paper singles out (``max/r-lse``; ``--columns`` for others), seed 0, offline shapes: the medium budget as committed (``OWN_SCHEDULE_MEDIUM`` since issue 27) (epsilon 1e-8, decays after 80 % and 90 % of 5,000 steps), the
reference's epsilon 1e-3, and the reference's decay points (40 %, 80 %). Prints the mean training
loss of every 500 steps and the test accuracy at 1,000, 100 and 50 particles."""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
import torch
from _header import print_header

from setfuncs.experiments.pointcloud import OWN_SCHEDULE_MEDIUM, Data, accuracy_by_population_size, load_data, train_model

VARIANTS = {"MEDIUM (eps 1e-8, decays 80/90 %)": OWN_SCHEDULE_MEDIUM,
            "eps 1e-3 (the reference's)": replace(OWN_SCHEDULE_MEDIUM, eps=1e-3),
            "decays 40/80 % (the reference's)": replace(OWN_SCHEDULE_MEDIUM, decay_at=(0.4, 0.8))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--columns", nargs="+", default=["max/r-lse"])
    args = parser.parse_args()
    print_header()
    for spec in args.columns:
        for label, budget in VARIANTS.items():
            start = time.perf_counter()
            clouds = load_data(Data(), budget)
            model, losses = train_model(spec, 0, budget, clouds, progress=False)
            every = np.asarray(losses).reshape(-1, 500).mean(axis=1)
            accuracy = accuracy_by_population_size(model, clouds.test_x, clouds.test_y, (1000, 100, 50))
            print(f"{spec} | {label} | {time.perf_counter() - start:.0f} s")
            print("  loss per 500 steps: " + " ".join(f"{v:.2f}" for v in every))
            print("  test accuracy: " + ", ".join(f"{n} points {a:.1%}" for n, a in accuracy.items()), flush=True)


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
