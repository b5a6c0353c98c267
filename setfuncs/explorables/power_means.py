r"""Chapter 3's explorable: the power means :math:`M_p` between :math:`\min` and :math:`\max`.

.. math::
    M_p(X) = \Big(\frac{1}{N} \sum_{i=1}^N x_i^p\Big)^{1/p}, \qquad
    M_0(X) = \exp\Big(\frac1N \sum_i \ln x_i\Big),

for positive particles, at any exponent :math:`p` the reader picks on a stretched axis
(:math:`p = \sinh u`, with :math:`u` on the slider: nearly linear around :math:`p = 0`, logarithmic
in both tails, from :math:`-100` to :math:`100`). Top: filled contours of :math:`\min`, :math:`M_p`
and :math:`\max` on pairs :math:`(x_1, x_2) \in [0.1, 2]^2` with shared levels. Bottom:
:math:`M_p` of a population the reader edits (drag particles, add and remove them) against
:math:`p`, from its minimum to its maximum, with a dot at the current :math:`p`; the read-outs are
:math:`p`, :math:`M_p`, and the population's minimum, geometric mean, mean and maximum.

The state is ``asinh_p`` (the slider's position :math:`u`), ``size`` (how many particles) and
``population`` (:data:`CAPACITY` positive particles, of which the first ``size`` are the
population; adding one brings back the next).
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from ..plain import PowerMean
from ..plots import pair_grid
from ..registry import aggregation
from .base import Explorable
from .esm import module_source
from .rng import uniforms

__all__ = ["PowerMeans", "CAPACITY", "P_LIMIT", "VALUE_RANGE"]

#: The most particles a population can have (the state holds them all; ``size`` says how many count).
CAPACITY = 40
#: The slider runs over p in [-P_LIMIT, P_LIMIT], on the stretched scale u = asinh(p).
P_LIMIT = 100.0
#: Where a particle can be dragged: positive values, so that every M_p is defined.
VALUE_RANGE = (0.05, 2.5)
#: The pairs (x1, x2) of the contour panels lie in [PAIR_RANGE]^2; the levels are shared.
PAIR_RANGE = (0.1, 2.0)
LEVELS = 19
#: The population's landmarks: read-out name, label, colour (as on the page).
LANDMARKS = [("minimum", "min", "#d62728"), ("geometric", "geometric mean", "#9467bd"),
             ("mean", "mean", "#2ca02c"), ("maximum", "max", "#ff7f0e")]
#: The stretched axis' ticks.
P_TICKS = [-100, -10, -2, 0, 2, 10, 100]


class PowerMeans(Explorable):
    """min, M_p and max on pairs; M_p of an editable population against a continuous exponent p."""

    module = "power_means"
    _esm = module_source(module)
    # p = sinh(u): about -4.0, 0.0137 (near the geometric mean's limit), 40.7 and -100 (the end)
    probes = [{"asinh_p": -2.1}, {"asinh_p": 0.0137, "size": 7}, {"asinh_p": 4.4, "size": 33},
              {"asinh_p": -math.asinh(P_LIMIT), "size": 2}]

    def __init__(self, p: float = 4.0, size: int = 20, seed: int = 3) -> None:
        if not -P_LIMIT <= p <= P_LIMIT:
            raise ValueError(f"p must lie in [-{P_LIMIT:g}, {P_LIMIT:g}] (the slider's range), got {p}")
        if not 1 <= size <= CAPACITY:
            raise ValueError(f"size must lie in [1, {CAPACITY}], got {size}")
        low, high = PAIR_RANGE
        population = [round(low + (high - low) * u, 3) for u in uniforms(seed, CAPACITY)]
        state = {"asinh_p": math.asinh(p), "size": size, "population": population}
        values = self.readouts(state)
        super().__init__(state, alt=(
            f"Three square filled contour plots over x1 and x2 from {low:g} to {high:g}: min, whose contours are "
            f"L shapes opening to the upper right, the power mean for p = {p:g}, whose contours are rounded "
            f"L shapes like those of max, and max, whose L shapes open to the lower left. Below them a line "
            f"chart of the power mean of {size} particles, drawn as dots in a column on the right, against "
            f"the exponent p from -100 to 100 on a stretched axis: the curve rises from the smallest particle "
            f"({values['minimum']:.3g}) through the geometric mean ({values['geometric']:.3g}) at p = 0 and the "
            f"mean ({values['mean']:.3g}) at p = 1 to the largest particle ({values['maximum']:.3g}), with a "
            f"black dot at p = {p:g}, where it is {values['power_mean']:.3g}."))

    @staticmethod
    def particles(state: dict[str, Any]) -> torch.Tensor:
        """The population of ``state`` as one batch ``[1, N, 1]`` in float64."""
        values = state["population"][: int(state["size"])]
        return torch.tensor(values, dtype=torch.float64).reshape(1, -1, 1)

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        p = math.sinh(state["asinh_p"])
        x = cls.particles(state)
        return {"p": p, "power_mean": PowerMean(p)(x).item(), "minimum": aggregation("min")(x).item(),
                "geometric": PowerMean(0)(x).item(), "mean": aggregation("mean")(x).item(),
                "maximum": aggregation("max")(x).item()}

    def still(self) -> Figure:
        state = self.state
        p, x = math.sinh(state["asinh_p"]), self.particles(state)
        values = self.readouts(state)
        fig = plt.figure(figsize=(7.4, 5.6), layout="constrained")
        grid = fig.add_gridspec(2, 3, height_ratios=[1.2, 1])
        levels = np.linspace(*PAIR_RANGE, LEVELS + 1)
        panels = [(aggregation("min"), "min"), (PowerMean(p), f"$M_p$, $p = {p:.3g}$"), (aggregation("max"), "max")]
        for k, (aggregate, title) in enumerate(panels):
            ax = fig.add_subplot(grid[0, k])
            x1, x2, z = pair_grid(aggregate, *PAIR_RANGE, points=121)
            ax.contourf(x1, x2, z, levels=levels, cmap="viridis")
            ax.contour(x1, x2, z, levels=levels, colors="white", linewidths=0.5)
            ax.set(title=title, aspect="equal", xlabel="$x_1$", xticks=[0.1, 1, 2], yticks=[0.1, 1, 2])
            ax.set_ylabel("$x_2$" if k == 0 else "")
        curve = fig.add_subplot(grid[1, :])
        u = np.linspace(-math.asinh(P_LIMIT), math.asinh(P_LIMIT), 241)
        curve.plot(u, [PowerMean(math.sinh(v))(x).item() for v in u], color="#1f77b4")
        for key, label, colour in LANDMARKS:
            curve.axhline(values[key], color=colour, linestyle=":", linewidth=1.2, label=label)
        curve.plot(state["asinh_p"], values["power_mean"], "o", color="black", markersize=8)
        right = math.asinh(P_LIMIT) * 1.16  # the particles, in a column right of the curve
        curve.plot(np.full(x.shape[1], right), x.flatten().numpy(), "o", color="#1f77b4", alpha=0.8,
                   markeredgecolor="white", markersize=7)
        curve.axvline(math.asinh(P_LIMIT) * 1.08, color="0.6", linewidth=0.8)
        curve.set(xticks=[math.asinh(t) for t in P_TICKS], xticklabels=[str(t) for t in P_TICKS],
                  xlim=(-math.asinh(P_LIMIT) * 1.02, right * 1.04), ylim=(0, VALUE_RANGE[1]),
                  xlabel="exponent $p$ (stretched axis)", ylabel="$M_p$",
                  title=f"$M_p$ of {x.shape[1]} particles (dots, right)")
        curve.legend(loc="upper left", fontsize=9, ncols=2)
        return fig
