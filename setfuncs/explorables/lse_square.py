r"""Chapter 4's explorable: max, LSE and sum of a pair on the square :math:`[-\lambda, \lambda]^2`.

.. math::
    \max(x_1, x_2) \le \operatorname{LSE}(x_1, x_2) = \log(e^{x_1} + e^{x_2}) \le \max(x_1, x_2) + \log 2,

so on a large square LSE looks like max, and on a small one (where :math:`e^x \approx 1 + x`) like
:math:`\log 2 + (x_1 + x_2)/2`, an affine function of the sum: filled contours at any :math:`\lambda`
the reader picks, and the three values at a point the reader drags.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from ..plots import pair_grid
from ..registry import aggregation
from .base import Explorable
from .esm import module_source

__all__ = ["LseSquare"]

NAMES = {"max": "max", "lse": "LΣE", "sum": "sum"}


class LseSquare(Explorable):
    """max, LΣE and sum on :math:`[-\\lambda, \\lambda]^2`; the read-outs at ``point`` (fractions of λ)."""

    module = "lse_square"
    _esm = module_source(module)
    probes = [{"half_width": 7.3}, {"half_width": 0.37}]

    def __init__(self, half_width: float = 100.0, point: tuple[float, float] = (0.6, -0.3), levels: int = 12) -> None:
        if not 0.1 <= half_width <= 100:
            raise ValueError(f"half_width must lie in [0.1, 100] (the slider's range), got {half_width}")
        if not all(-1 <= p <= 1 for p in point):
            raise ValueError(f"point is a fraction of the half-width in [-1, 1]^2, got {point}")
        super().__init__({"half_width": half_width, "point": list(point), "levels": levels},
                         alt=f"Three filled contour plots, of max, logsumexp and sum of two inputs on the square "
                             f"from -{half_width:g} to {half_width:g}, with an orange point at "
                             f"({point[0] * half_width:g}, {point[1] * half_width:g}). The logsumexp panel's "
                             f"contours have the L shapes of the max panel at this half-width.")

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        w = state["half_width"]
        pair = torch.tensor([[[state["point"][0] * w], [state["point"][1] * w]]], dtype=torch.float64)
        return {key: aggregation(key)(pair).item() for key in NAMES}

    def still(self) -> Figure:
        w, (u, v), levels = self.state["half_width"], self.state["point"], self.state["levels"]
        fig, axes = plt.subplots(1, 3, figsize=(7.5, 2.9), layout="constrained")
        for ax, (key, title) in zip(axes, NAMES.items()):
            x1, x2, values = pair_grid(aggregation(key), -w, w)
            ax.contourf(x1, x2, values, levels=np.linspace(values.min(), values.max(), levels + 1), cmap="viridis")
            ax.plot(u * w, v * w, "o", color="#d35400", markeredgecolor="white", markersize=8)
            ax.set(title=f"{title} on $[-{w:g}, {w:g}]^2$", aspect="equal")
        return fig
