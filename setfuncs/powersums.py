r"""The continuous sum decomposition behind Theorem 2 (Wagstaff et al. 2019), made explicit.

For populations of exactly ``N`` scalars, the embedding :math:`\phi(x) = (x, x^2, \dots, x^N)`
summed over the particles gives the power sums :math:`s_k = \sum_i x_i^k`. Newton's identities
turn them into the elementary symmetric polynomials :math:`e_k`, the coefficients of
:math:`\prod_i (z - x_i)`, whose roots are the particles; any invariant function, such as
``max``, is then a function :math:`\rho` of the ``N``-dimensional sum (:func:`power_sums`,
:func:`particles_from_power_sums`).

For populations of *any* size up to :math:`N_{\max}`, the sums are read as the power sums of
:math:`N_{\max}` roots, the missing particles padded with zeros, and zeros are invisible to power
sums. The embedding must therefore stay away from zero. Positivity alone identifies every population
(:math:`\phi(x) = (e^{x}, \dots, e^{N_{\max} x})` does) but does not make :math:`\rho` continuous:
:math:`e^{-n} \to 0`, so the sums of :math:`\{0, -n\}` tend to the sum of :math:`\{0\}`, while the
population size, a continuous invariant function, is 2 along the sequence and 1 at its limit. With
:math:`y = 2 + \tanh x \in (1, 3)` and :math:`\phi(x) = (y, y^2, \dots, y^{N_{\max}})`
(:func:`bounded_power_sums`) the particles' roots stay in :math:`(1, 3)`, away from the padding
zeros: when sums converge, the roots converge (they depend continuously on the coefficients), the
size is eventually the limit's, and the particles converge. So :math:`\rho` — recover the population
(:func:`particles_from_bounded_power_sums`), then apply :math:`f` — is continuous on the set of all
sums. On a compact particle space it extends to a continuous function on all of
:math:`\mathbb{R}^{N_{\max}}`; on :math:`\mathbb{R}` it need not (an unbounded :math:`f` has an
unbounded :math:`\rho` on a bounded set of sums).

The chapters *Sum decomposition*, *Sum isomorphism* and *A note on universal approximation* use it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["power_sums", "particles_from_power_sums", "max_from_power_sums", "bounded_embedding",
           "bounded_power_sums", "particles_from_bounded_power_sums"]


def power_sums(x: np.ndarray) -> np.ndarray:
    r"""Sum of :math:`\phi(x) = (x, \dots, x^N)` over each population: ``[B, N] -> [B, N]``."""
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"power_sums takes populations of scalars, shape [B, N]; got {x.shape}")
    return np.stack([(x ** k).sum(axis=1) for k in range(1, x.shape[1] + 1)], axis=1)


def _elementary_symmetric(s: np.ndarray) -> list[float]:
    """:math:`e_0, ..., e_N` from the power sums :math:`s_1, ..., s_N` (Newton's identities)."""
    e = [1.0]
    for k in range(1, len(s) + 1):
        e.append(sum((-1) ** (j - 1) * e[k - j] * s[j - 1] for j in range(1, k + 1)) / k)
    return e


def _roots(s: np.ndarray, name: str) -> np.ndarray:
    """The roots of :math:`\\sum_k (-1)^k e_k z^{N-k}` for the power sums ``s`` of one population."""
    s = np.asarray(s, dtype=float)
    if s.ndim != 1 or len(s) == 0:
        raise ValueError(f"{name} takes the N power sums of one population; got shape {s.shape}")
    return np.roots([(-1) ** k * e_k for k, e_k in enumerate(_elementary_symmetric(s))])


def particles_from_power_sums(s: np.ndarray) -> np.ndarray:
    r""":math:`\rho` that recovers the particles from ``s = (s_1, ..., s_N)`` of one population.

    Newton's identities :math:`k e_k = \sum_{j=1}^{k} (-1)^{j-1} e_{k-j} s_j` give the
    coefficients of :math:`\sum_k (-1)^k e_k z^{N-k}`; its roots are the particles (sorted,
    real parts: rounding makes some roots slightly complex).
    """
    return np.sort(_roots(s, "particles_from_power_sums").real)


def max_from_power_sums(s: np.ndarray) -> float:
    r""":math:`\max` of a population as a function of its power sums: ``rho(sum phi(x))``."""
    return float(particles_from_power_sums(s)[-1])


def bounded_embedding(x: np.ndarray, n_max: int) -> np.ndarray:
    r""":math:`\phi(x) = (y, y^2, \dots, y^{N_{\max}})`, :math:`y = 2 + \tanh x \in (1, 3)`: ``[...] -> [..., n_max]``.

    Every coordinate lies in :math:`(1, 3^{N_{\max}})`: positive (so it suits
    :math:`g = \ln`, chapter *Sum isomorphism*) and bounded away from zero (so :math:`\rho` is
    continuous for populations of every size up to ``n_max``).
    """
    if n_max < 1:
        raise ValueError(f"n_max must be at least 1, got {n_max}")
    y = 2.0 + np.tanh(np.asarray(x, dtype=float))
    return np.stack([y ** k for k in range(1, n_max + 1)], axis=-1)


def bounded_power_sums(populations: Sequence[Sequence[float]], n_max: int) -> np.ndarray:
    r""":math:`\sum_i \phi(x_i)` with :func:`bounded_embedding`, one row per population.

    Args:
        populations: ``B`` populations of 1 to ``n_max`` scalars each (of any sizes).
        n_max: :math:`N_{\max}`, the largest population size and the latent dimension.

    Returns:
        The sums, ``[B, n_max]``.
    """
    sums = []
    for population in populations:
        x = np.asarray(population, dtype=float)
        if x.ndim != 1 or not 1 <= len(x) <= n_max:
            raise ValueError(f"each population must hold 1 to {n_max} scalars; got shape {x.shape}")
        sums.append(bounded_embedding(x, n_max).sum(axis=0))
    return np.stack(sums)


def particles_from_bounded_power_sums(s: np.ndarray) -> np.ndarray:
    r""":math:`\rho` that recovers a population of any size up to ``len(s)`` from :func:`bounded_power_sums`.

    The sums are the power sums of :math:`N_{\max}` roots: :math:`y_i = 2 + \tanh x_i \in (1, 3)` for
    the particles and :math:`0` for the padding. Roots with real part above :math:`1/2` are
    particles (their number is the population size), mapped back by :math:`x = \operatorname{artanh}(y - 2)`;
    returned sorted. A particle beyond about :math:`|x| = 19`, where :math:`\tanh x` rounds to
    :math:`\pm 1` in float64, comes back as :math:`\pm\infty`: it is still counted.
    """
    roots = _roots(s, "particles_from_bounded_power_sums").real
    y = np.sort(roots[roots > 0.5])
    with np.errstate(divide="ignore"):
        return np.arctanh(np.clip(y - 2.0, -1.0, 1.0))
