r"""Chapter 2's explorable: the maximum of a population as :math:`\rho\big(\sum_i \phi(x_i)\big)` with power sums.

The reader drags the :math:`N` particles of a population in :math:`[0, 1]` (and adds or removes
them) and picks the latent dimension :math:`L`. The embedding is :math:`\phi(x) = (x, x^2, \dots, x^L)`,
so the sum holds the power sums :math:`s_k = \sum_i x_i^k`, :math:`k \le L`; :math:`\rho` is the
chapter's decoder for populations of up to :math:`L` particles (:func:`setfuncs.powersums.max_from_power_sums`):
Newton's identities give the polynomial whose :math:`L` roots have these power sums, and
:math:`\rho` returns the largest real part of a root. For :math:`L \ge N` the roots are the particles
and :math:`L - N` zeros (a zero, the padding, never raises the maximum of particles in
:math:`[0, 1]`), so :math:`\rho` is the maximum up to rounding; for :math:`L < N` the roots are
:math:`L` other numbers, often complex, with the same first :math:`L` power sums, and :math:`\rho`
misses. The page shows the particles and the roots in the complex plane and the error
:math:`|\rho - \max|` for every :math:`L` from 1 to 12 at once.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from ..powersums import _roots, max_from_power_sums, power_sums
from .base import Explorable
from .esm import module_source

__all__ = ["PowerSumsMax", "latent_sums", "decoded_max"]

#: The largest latent dimension and population size the page offers.
LARGEST = 12
POPULATION = [0.08, 0.31, 0.47, 0.66, 0.83]
#: The error panel's floor: an exact zero error is drawn there.
FLOOR = 1e-16


def latent_sums(population: list[float], latent: int) -> np.ndarray:
    r""":math:`\sum_i \phi(x_i)` with :math:`\phi(x) = (x, \dots, x^L)`: :func:`~setfuncs.powersums.power_sums`
    of the population padded with zeros to at least ``latent`` particles (zeros add nothing), cut to ``latent``."""
    x = np.asarray(population, dtype=float)
    padded = np.concatenate([x, np.zeros(max(0, latent - len(x)))])
    return power_sums(padded[None])[0][:latent]


def decoded_max(population: list[float], latent: int) -> float:
    r""":math:`\rho\big(\sum_i \phi(x_i)\big)`: :func:`~setfuncs.powersums.max_from_power_sums` of :func:`latent_sums`."""
    return max_from_power_sums(latent_sums(population, latent))


class PowerSumsMax(Explorable):
    """The maximum of a population through ``latent`` power sums, against the true maximum."""

    module = "power_sums"
    _esm = module_source(module)
    probes = [{"latent": 5}, {"latent": 9}, {"latent": 1}]
    #: the page finds the roots by Aberth's iteration, numpy by the companion matrix's eigenvalues
    tolerance = 1e-6

    def __init__(self, population: list[float] | None = None, latent: int = 3) -> None:
        population = [float(v) for v in (POPULATION if population is None else population)]
        if not 1 <= len(population) <= LARGEST or not all(0 <= v <= 1 for v in population):
            raise ValueError(f"a population of 1 to {LARGEST} numbers in [0, 1], got {population}")
        if not 1 <= latent <= LARGEST:
            raise ValueError(f"latent must lie in 1..{LARGEST} (the slider's range), got {latent}")
        state = {"population": population, "latent": latent, "added": 0}
        n, rho, top = len(population), decoded_max(population, latent), max(population)
        where = (f"with L = {latent} at least N = {n} the crosses sit on the particles"
                 + (" and at zero" if latent > n else "") + f", and the dashed line of rho at {rho:.2f} lies on the "
                 f"solid line of the maximum, {top:.2f}" if latent >= n else
                 f"with L = {latent} below N = {n} the crosses lie elsewhere, some off the real axis, and the dashed "
                 f"line of rho at {rho:.2f} misses the solid line of the maximum, {top:.2f}")
        super().__init__(state, alt=(
            f"Two panels. Left: the complex plane, with the {n} particles as blue circles on the real axis between 0 "
            f"and 1 and, as orange crosses, the {latent} roots that rho recovers from the first {latent} power sums; "
            f"{where}. Right: the error |rho - max| on a logarithmic axis for every latent dimension L from 1 to "
            f"{LARGEST}, ringed at L = {latent}: large for L below N = {n}, at rounding level (about 1e-14) from "
            f"L = N on."))

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        population, latent = state["population"], int(state["latent"])
        sums = latent_sums(population, latent)
        rho, true = max_from_power_sums(sums), float(np.max(population))
        values = {"size": len(population), "true_max": true, "rho": rho, "error": abs(rho - true)}
        values.update({f"s_{k}": float(s) for k, s in enumerate(sums, start=1)})
        return values

    def still(self) -> Figure:
        population, latent = self.state["population"], self.state["latent"]
        n = len(population)
        roots = _roots(latent_sums(population, latent), "the still frame")  # complex, as rho finds them
        fig, (plane, errors) = plt.subplots(1, 2, figsize=(7.5, 3.3), layout="constrained",
                                            gridspec_kw={"width_ratios": [1.35, 1]})
        plane.axhline(0, color="0.7", lw=0.8)
        plane.plot(population, np.zeros(n), "o", markersize=11, color="#1f77b4", label=f"particles (N = {n})")
        inside = (roots.real >= -0.5) & (roots.real <= 1.5)
        plane.plot(roots.real[inside], roots.imag[inside], "x", markersize=9, mew=2, color="#d35400",
                   label=f"roots ρ recovers (L = {latent})")
        for root in roots[~inside]:  # off the panel: a triangle at its edge, with the root's value
            edge = 1.5 if root.real > 1.5 else -0.5
            plane.plot(edge, np.clip(root.imag, -1, 1), ">" if edge > 0 else "<", markersize=9, color="#d35400",
                       clip_on=False)
            plane.text(edge - 0.05 if edge > 0 else edge + 0.05, np.clip(root.imag, -1, 1) + 0.08,
                       f"{root.real:.3g}" + (f" {'+' if root.imag > 0 else '−'} {abs(root.imag):.3g}i" if abs(root.imag) > 1e-12 else ""),
                       ha="right" if edge > 0 else "left", fontsize=9, color="#d35400")
        plane.axvline(max(population), color="#1f77b4", lw=1)
        plane.axvline(decoded_max(population, latent), color="#d35400", lw=1, ls="--")
        plane.set(xlim=(-0.5, 1.5), ylim=(-1, 1), xlabel="real part", ylabel="imaginary part")
        plane.legend(loc="lower right", fontsize=9)
        sizes = np.arange(1, LARGEST + 1)
        error = [max(abs(decoded_max(population, k) - max(population)), FLOOR) for k in sizes]
        errors.semilogy(sizes, error, "o-", color="#d35400", markersize=5)
        errors.semilogy([latent], [error[latent - 1]], "o", markersize=11, mfc="none", color="black")
        errors.axvline(n, color="k", ls="--", lw=1)
        errors.text(n + 0.2, 1e-3, "L = N", fontsize=9)
        errors.set(xlabel="latent dimension L", ylabel="|ρ(Σφ) − max|", ylim=(FLOOR / 3, 30), xticks=sizes[::1])
        for ax in (plane, errors):
            ax.tick_params(labelsize=9)
            ax.xaxis.label.set_fontsize(10)
            ax.yaxis.label.set_fontsize(10)
        return fig

