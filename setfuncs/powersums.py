r"""The continuous sum decomposition behind Theorem 2 (Wagstaff et al. 2019), made explicit.

For populations of exactly ``N`` scalars, the embedding :math:`\phi(x) = (x, x^2, \dots, x^N)`
summed over the particles gives the power sums :math:`s_k = \sum_i x_i^k`. (For sizes up to ``N``,
zeros are invisible to power sums; embedding :math:`e^{x}` instead of :math:`x` mends that.) Newton's identities
turn them into the elementary symmetric polynomials :math:`e_k`, the coefficients of
:math:`\prod_i (z - x_i)`, whose roots are the particles; any invariant function, such as
``max``, is then a function :math:`\rho` of the ``N``-dimensional sum. The chapters *Sum
decomposition* and *A note on universal approximation* use it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["power_sums", "particles_from_power_sums", "max_from_power_sums"]


def power_sums(x: np.ndarray) -> np.ndarray:
    r"""Sum of :math:`\phi(x) = (x, \dots, x^N)` over each population: ``[B, N] -> [B, N]``."""
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"power_sums takes populations of scalars, shape [B, N]; got {x.shape}")
    return np.stack([(x ** k).sum(axis=1) for k in range(1, x.shape[1] + 1)], axis=1)


def particles_from_power_sums(s: np.ndarray) -> np.ndarray:
    r""":math:`\rho` that recovers the particles from ``s = (s_1, ..., s_N)`` of one population.

    Newton's identities :math:`k e_k = \sum_{j=1}^{k} (-1)^{j-1} e_{k-j} s_j` give the
    coefficients of :math:`\sum_k (-1)^k e_k z^{N-k}`; its roots are the particles (sorted,
    real parts: rounding makes some roots slightly complex).
    """
    s = np.asarray(s, dtype=float)
    if s.ndim != 1 or len(s) == 0:
        raise ValueError(f"particles_from_power_sums takes the N power sums of one population; got shape {s.shape}")
    e = [1.0]
    for k in range(1, len(s) + 1):
        e.append(sum((-1) ** (j - 1) * e[k - j] * s[j - 1] for j in range(1, k + 1)) / k)
    return np.sort(np.roots([(-1) ** k * e_k for k, e_k in enumerate(e)]).real)


def max_from_power_sums(s: np.ndarray) -> float:
    r""":math:`\max` of a population as a function of its power sums: ``rho(sum phi(x))``."""
    return float(particles_from_power_sums(s)[-1])
