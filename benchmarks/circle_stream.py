"""The circle sweep's fixed costs on one device: the seeds' shared training stream and the test sets.

    python benchmarks/circle_stream.py                     # FULL: 20 seeds x 20,000 batches of 64
    OMP_NUM_THREADS=1 python benchmarks/circle_stream.py --device cpu --seeds 2 --steps 200

A GPU sweep trains each configuration's seeds as one ensemble on one stream per seed, made once per
worker process (:func:`setfuncs.experiments.circle.stream.ensemble_stream`): the populations are
drawn on the CPU, one seed after another, and labelled where the stream lives (on a GPU by the
torch solver). The test sets (5,000 populations of 5 to 100 particles) are labelled once per worker
by the numpy solver; on a GPU the script also labels them with the torch solver. Each part is timed
as a sweep worker meets it (one torch thread), so that the first configuration's wall time in a
results file can be split into data and training.
"""

from __future__ import annotations

import argparse
import time
from typing import Callable, TypeVar

import torch

from setfuncs.experiments.circle import FULL
from setfuncs.experiments.circle.data import test_set
from setfuncs.experiments.circle.stream import ensemble_stream, labels, training_populations
from setfuncs.experiments.sweeps import TEST_SEED
from setfuncs.steps import resolve_device

T = TypeVar("T")


def timed(what: str, fn: Callable[[], T], device: torch.device) -> T:
    """Run ``fn``, print its wall time (the device synchronised), return its result."""
    start = time.perf_counter()
    result = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    print(f"  {what:<58} {time.perf_counter() - start:8.2f} s", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default)")
    parser.add_argument("--seeds", type=int, default=20, help="seeds of the stream (default: 20)")
    parser.add_argument("--steps", type=int, default=FULL.steps, help=f"batches per seed (default: {FULL.steps})")
    args = parser.parse_args()
    if args.seeds < 1 or args.steps < 1:
        parser.error("--seeds and --steps must be at least 1")
    device = resolve_device(args.device)
    torch.set_num_threads(1)                                  # as in a sweep worker
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    seeds = tuple(range(args.seeds))
    print(f"device: {name}; torch {torch.__version__}; {args.seeds} seeds x {args.steps} batches of {FULL.batch}")
    print("one seed, parts:")
    x = timed("draw its populations (CPU, one thread)", lambda: training_populations(10**6, args.steps, FULL.batch),
              device)
    timed(f"label them on {device.type} ({x.shape[0] * x.shape[1]:,} populations)", lambda: labels(x.to(device)),
          device)
    print(f"the stacked stream of {args.seeds} seeds, as the sweep makes it:")
    timed("ensemble_stream: draw, move, label", lambda: ensemble_stream(
        seeds, args.steps, FULL.batch, str(device)), device)
    print(f"test sets of {FULL.test_size:,} populations (numpy solver, CPU):")
    for n in FULL.test_population_sizes:
        x, _, _ = timed(f"N = {n}", lambda: test_set(FULL.test_size, n, TEST_SEED), device)
        if device.type == "cuda":
            timed(f"N = {n}, the same populations labelled on cuda (torch solver)", lambda: labels(x.to(device)),
                  device)


if __name__ == "__main__":
    main()
