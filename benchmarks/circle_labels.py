"""Populations labelled per second: the batched MEC solver against pure-Python Welzl and miniball.

    python benchmarks/circle_labels.py                       # B = 20,000 populations of N = 20
    python benchmarks/circle_labels.py --batch 2000 --particles 20 --repeat 5

The populations are drawn from a 3-component Gaussian mixture, as in the paper's Section 4.1.
``min_enclosing_circles`` runs on the whole batch (median of ``--repeat`` runs);
``min_enclosing_circle`` (Welzl, pure Python) and ``miniball.get_bounding_ball`` (Welzl, numpy per
point) loop over the same populations once. The script also checks that all three agree.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from typing import Callable

import miniball
import numpy as np

from setfuncs.experiments.circle import min_enclosing_circle, min_enclosing_circles


def gmm_populations(batch: int, particles: int, seed: int) -> np.ndarray:
    """``[batch, particles, 2]``: per population 3 means ~ N(0, 9 I), particles ~ N(mean, 0.25 I)."""
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=3.0, size=(batch, 3, 2))
    pick = rng.integers(3, size=(batch, particles))
    return np.take_along_axis(means, pick[..., None], axis=1) + rng.normal(scale=0.5, size=(batch, particles, 2))


Labels = tuple[np.ndarray, np.ndarray]


def seconds(fn: Callable[[], Labels], repeat: int) -> tuple[float, Labels]:
    """Median wall time of ``fn`` over ``repeat`` runs, and its result."""
    times, results = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        results.append(fn())
        times.append(time.perf_counter() - start)
    return statistics.median(times), results[0]


def loop(solve: Callable[[np.ndarray], tuple[np.ndarray, float]], points: np.ndarray) -> Labels:
    circles = [solve(p) for p in points]
    return np.stack([c for c, _ in circles]), np.array([r for _, r in circles])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=20_000)
    parser.add_argument("--particles", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of the batched solver")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    points = gmm_populations(args.batch, args.particles, args.seed)

    def ball(p: np.ndarray) -> tuple[np.ndarray, float]:
        center, r2 = miniball.get_bounding_ball(p)
        return center, float(np.sqrt(r2))

    min_enclosing_circles(points[:256])                                   # warm-up
    batched_s, (centers, radii) = seconds(lambda: min_enclosing_circles(points), args.repeat)
    welzl_s, (welzl_c, welzl_r) = seconds(lambda: loop(min_enclosing_circle, points), 1)
    ball_s, (ball_c, ball_r) = seconds(lambda: loop(ball, points), 1)

    print(f"numpy {np.__version__}, miniball {miniball.__version__}, {platform.processor() or platform.machine()}; "
          f"B = {args.batch} populations of N = {args.particles} points")
    rates = {"batched (min_enclosing_circles)": batched_s, "pure-Python Welzl (min_enclosing_circle)": welzl_s,
             "miniball.get_bounding_ball": ball_s}
    for name, s in rates.items():
        ratio = "" if s == batched_s else f"  batched is {s / batched_s:.1f}x faster"
        print(f"{name:<42} {args.batch / s:8.0f} populations/s  ({s:5.2f} s){ratio}")
    scale = radii.max()
    print(f"max |difference| to batched, relative to the largest radius: Welzl "
          f"{max(np.abs(welzl_c - centers).max(), np.abs(welzl_r - radii).max()) / scale:.1e}, miniball "
          f"{max(np.abs(ball_c - centers).max(), np.abs(ball_r - radii).max()) / scale:.1e}")


if __name__ == "__main__":
    main()
