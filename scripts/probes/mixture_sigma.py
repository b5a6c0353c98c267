"""Why the mixture experiment's components have standard deviation 0.7: for several values, on
2,000 populations of 100 particles (seed 0), the share of populations whose two components a line
separates (a linear program per population), the error of the best line (the bisector), and the
mean absolute error of EM's smaller weight against a constant guess."""

from __future__ import annotations

import numpy as np
import torch
from _header import print_header
from scipy.optimize import linprog
from scipy.stats import norm

from setfuncs.experiments.mixture import SMALLER_WEIGHT_RANGE, em_smaller_weight
from setfuncs.experiments.mixture.data import sample_labelled_particles, sample_mixtures

POPULATIONS, PARTICLES = 2000, 100


def separable(x: np.ndarray, second: np.ndarray) -> bool:
    """Whether some line w.x + b puts the two components' particles on opposite sides (margin 1)."""
    signs = np.where(second, 1.0, -1.0)
    constraints = -signs[:, None] * np.hstack([x, np.ones((len(x), 1))])     # -s (w.x + b) <= -1
    if second.all() or not second.any():
        return True
    return linprog(np.zeros(3), A_ub=constraints, b_ub=-np.ones(len(x)), bounds=[(None, None)] * 3,
                   method="highs").status == 0


def main() -> None:
    print_header()
    constant = sum(SMALLER_WEIGHT_RANGE) / 2
    print(f"{'sigma':>6} {'separable':>10} {'bisector error':>15} {'EM |error|':>11} {'constant |error|':>17}")
    for sigma in (0.4, 0.5, 0.6, 0.7, 0.8):
        generator = torch.Generator().manual_seed(0)
        weights, means = sample_mixtures(POPULATIONS, generator)
        x, second = sample_labelled_particles(weights, means, PARTICLES, generator, std=sigma)
        share = np.mean([separable(p, s) for p, s in zip(x.double().numpy(), second.numpy())])
        truth = weights.min(dim=1).values
        em_error = float((em_smaller_weight(x.double()) - truth).abs().mean())
        constant_error = float((truth - constant).abs().mean())
        print(f"{sigma:>6.1f} {share:>10.1%} {norm.cdf(-1 / sigma):>15.1%} {em_error:>11.3f} {constant_error:>17.3f}")
    print(f"\nthe means are {2 / 0.7:.1f} sigma apart at sigma = 0.7; the constant guess is {constant:.3f}")


if __name__ == "__main__":
    main()
