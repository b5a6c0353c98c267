"""Populations labelled per second with and without the convex-hull pruning of the batched solver.

    OMP_NUM_THREADS=1 python benchmarks/circle_hull.py                 # N = 20, 50, 100
    OMP_NUM_THREADS=1 python benchmarks/circle_hull.py --sizes 20 --batch 20000 --repeat 5

The populations are the circle experiment's (``sample_populations``: a Gaussian mixture of 1 to 3
components, float32, labelled in float64). For each size ``N``,
``min_enclosing_circles(x, prune=False)`` (every triple of all ``N`` points) and
``min_enclosing_circles(x)`` (the triples of each chunk's :func:`hull_candidates`) label the same
populations, each the median of ``--repeat`` runs after a warm-up, in CPU seconds of this process
(on a shared machine its wall time says more about the neighbours than about the solver). The
script checks that both give the same centres and radii bit for bit and prints the speed-up.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from setfuncs.experiments.circle.batched import hull_candidates, min_enclosing_circles
from setfuncs.experiments.circle.data import sample_populations


def cpu_seconds(x: np.ndarray, prune: bool, repeat: int) -> tuple[float, tuple[np.ndarray, np.ndarray]]:
    """Median CPU seconds of ``min_enclosing_circles(x, prune=prune)`` over ``repeat`` runs, and its result."""
    min_enclosing_circles(x[:64], prune=prune)                                # warm-up
    times = []
    for _ in range(repeat):
        start = time.process_time()
        result = min_enclosing_circles(x, prune=prune)
        times.append(time.process_time() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50, 100], help="population sizes N")
    parser.add_argument("--batch", type=int, default=2000, help="populations per size (default: 2000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each solver (default: 3)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.batch < 1 or args.repeat < 1 or min(args.sizes) < 1:
        parser.error("--batch, --repeat and --sizes must be at least 1")
    torch.set_num_threads(1)
    print(f"numpy {np.__version__}; {args.batch} populations per size, median of {args.repeat} runs, CPU seconds")
    print(f"{'N':>4} {'kept mean/max':>14} {'all triples /s':>15} {'pruned /s':>12} {'speed-up':>9}  bitwise equal")
    for n in args.sizes:
        x = sample_populations(args.batch, n, torch.Generator().manual_seed(args.seed)).double().numpy()
        kept = hull_candidates(x).sum(axis=1)
        before, (old_centers, old_radii) = cpu_seconds(x, False, args.repeat)
        after, (centers, radii) = cpu_seconds(x, True, args.repeat)
        same = np.array_equal(centers, old_centers) and np.array_equal(radii, old_radii)
        print(f"{n:>4} {kept.mean():>8.1f} / {kept.max():<3} {args.batch / before:>15.0f} {args.batch / after:>12.0f} "
              f"{before / after:>8.1f}x  {same}")


if __name__ == "__main__":
    main()
