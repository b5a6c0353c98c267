"""Seconds per training step of every Table 2 column, and what a point-cloud sweep will take.

    OMP_NUM_THREADS=1 python benchmarks/pointcloud_steps.py                       # MEDIUM, 3 seeds
    OMP_NUM_THREADS=1 python benchmarks/pointcloud_steps.py --budget full --steps 2

Generates the offline shapes of the budget (timed), then times ``--steps`` Adam steps of each
column of Table 2 (after one warm-up step) on real batches, one torch thread, and extrapolates a
sweep of ``--runs`` seeds on ``--jobs`` cores: the numbers in the docstring of
``setfuncs.experiments.pointcloud.budget`` come from this script. Evaluation is not included
(about 4 to 9 s per MEDIUM run).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import setfuncs as sf
from setfuncs.experiments.pointcloud import BUDGETS, Data, load_data, make_model, training_batches
from setfuncs.experiments.provenance import cpu_model


def seconds_per_step(spec: str, budget, clouds, steps: int) -> float:
    """Mean seconds of one forward, backward and Adam step of ``spec`` after a warm-up step."""
    torch.manual_seed(0)
    model = make_model(spec, len(clouds.class_names), budget)
    optimizer = torch.optim.Adam(model.parameters(), budget.lr, eps=budget.eps)
    sample = training_batches(clouds.train_x, clouds.train_y, budget.batch, np.random.default_rng(0))
    for step in range(steps + 1):
        if step == 1:
            start = time.perf_counter()
        x, y, _ = sample()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", choices=sorted(BUDGETS), default="medium")
    parser.add_argument("--steps", type=int, default=8, help="timed steps per column (default: 8)")
    parser.add_argument("--runs", type=int, default=3, help="seeds of the extrapolated sweep (default: 3)")
    parser.add_argument("--jobs", type=int, default=2, help="cores of the extrapolated sweep (default: 2)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    budget = BUDGETS[args.budget]
    start = time.perf_counter()
    clouds = load_data(Data(), budget)
    print(f"{cpu_model()}, torch {torch.__version__}, one thread; budget {budget.name}: "
          f"{len(clouds.train_x)} training clouds of {budget.points} particles and "
          f"{len(clouds.test_x)} test clouds generated in {time.perf_counter() - start:.1f} s")
    total = 0.0
    for spec in sf.TABLE2_SPECS:
        seconds = seconds_per_step(spec, budget, clouds, args.steps)
        total += seconds
        print(f"{spec:<13} {seconds:7.3f} s/step  {budget.batch / seconds:7.0f} clouds/s  "
              f"run {seconds * budget.steps:9.0f} s")
    sweep = total * budget.steps * args.runs / args.jobs
    print(f"all ten columns: {total:.3f} s per step; {args.runs} seeds on {args.jobs} cores: "
          f"{sweep / 3600:.2f} h of training")


if __name__ == "__main__":
    main()
