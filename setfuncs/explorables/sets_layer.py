r"""Chapter 1's explorable: an equivariant layer and an aggregate of a population the reader edits.

A population of 2-D particles, named A, B, C, ... and stored as the rows of
:math:`\mathbf{X} \in \mathbb{R}^{N \times 2}` in an order the reader can shuffle, goes through
the paper's equivariant layer, eq. (1),

.. math::
    \mathbf{Y} = \operatorname{equivariant}(\mathbf{X}) = \tanh\big((\mathbf{X} - \mathbf{1}\alpha(\mathbf{X}))\mathbf{W}^\top + \mathbf{b}\big),

(:class:`setfuncs.Equivariant` with a fixed :math:`2 \times 2` weight matrix and bias from the state)
with the aggregation :math:`\alpha` the reader picks among sum, mean and max. The page shows the
population and its aggregate :math:`\alpha(\mathbf{X})`, every particle's output with the
aggregate of the outputs :math:`\alpha(\mathbf{Y})` (an equivariant layer followed by an
aggregation: a Deep Set's recipe), and the rows of :math:`\mathbf{X}` and :math:`\mathbf{Y}` side
by side. Dragging a particle moves its output; shuffling the rows permutes the rows of both
matrices alike and leaves both aggregates and every particle's output as they were.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from ..equivariant import Equivariant
from .base import Explorable
from .esm import module_source

__all__ = ["SetsLayer"]

#: The particles' names, in the order they are added; A is the one the read-outs follow.
LETTERS = "ABCDEFGH"
#: One colour per name (matplotlib's tab10), the same in js/sets_layer.js.
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
AGGREGATIONS = ("sum", "mean", "max")
#: sigma's weights: close to the identity, so an output sits roughly where x_i - alpha(X) does.
WEIGHT = [[1.2, 0.3], [-0.2, 1.1]]
BIAS = [0.05, -0.05]
POPULATION = [[-0.55, 0.45], [0.3, 0.7], [0.65, -0.25], [-0.2, -0.65], [-0.75, -0.2]]


def layer(state: dict[str, Any]) -> Equivariant:
    """:class:`setfuncs.Equivariant` (2 -> 2, tanh) with the state's aggregation, weight and bias, in float64."""
    with torch.random.fork_rng(devices=[]):  # its random initialisation must not move the caller's generator
        module = Equivariant(2, 2, aggregation=state["aggregation"], activation="tanh").double()
    with torch.no_grad():
        module.linear.weight.copy_(torch.tensor(state["weight"], dtype=torch.float64))
        module.linear.bias.copy_(torch.tensor(state["bias"], dtype=torch.float64))
    return module


def forward(state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``alpha(X)`` [2], the outputs ``Y`` [N, 2] in row order and ``alpha(Y)`` [2], by setfuncs."""
    module = layer(state)
    x = torch.tensor([state["particles"]], dtype=torch.float64)
    with torch.no_grad():
        y = module(x)
        return module.aggregate(x)[0].numpy(), y[0].numpy(), module.aggregate(y)[0].numpy()


class SetsLayer(Explorable):
    """Eq. (1) with sum, mean or max on a population of named 2-D particles stored in a shuffleable order."""

    module = "sets_layer"
    _esm = module_source(module)
    probes = [{"aggregation": "max"}, {"aggregation": "sum"}]

    def __init__(self, particles: list[list[float]] | None = None, aggregation: str = "mean",
                 weight: list[list[float]] | None = None, bias: list[float] | None = None) -> None:
        particles = [list(map(float, p)) for p in (POPULATION if particles is None else particles)]
        if not 2 <= len(particles) <= len(LETTERS):
            raise ValueError(f"a population of 2 to {len(LETTERS)} particles, got {len(particles)}")
        if any(len(p) != 2 or not all(-1 <= v <= 1 for v in p) for p in particles):
            raise ValueError(f"each particle is a point of [-1, 1]^2 (the panel the reader drags on), got {particles}")
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
        state = {"labels": list(LETTERS[:len(particles)]), "particles": particles, "aggregation": aggregation,
                 "weight": WEIGHT if weight is None else weight, "bias": BIAS if bias is None else bias,
                 "shuffles": 0, "added": 0}
        alpha, _, aggregate = forward(state)
        super().__init__(state, alt=(
            f"Two square panels. Left: a population of {len(particles)} particles, coloured circles named "
            f"{', '.join(state['labels'])}, in the square from -1 to 1, each tagged with its row of the matrix X, "
            f"and a black diamond at their {aggregation}, alpha(X) = ({alpha[0]:.2f}, {alpha[1]:.2f}). Right: each "
            f"particle's output of the equivariant layer tanh((X - 1 alpha(X)) W^T + b), a circle of the same colour "
            f"and name, and a black square at the {aggregation} of the outputs, ({aggregate[0]:.2f}, {aggregate[1]:.2f})."))

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        alpha, y, aggregate = forward(state)
        named = y[state["labels"].index("A")]
        values = {"alpha_1": alpha[0], "alpha_2": alpha[1], "aggregate_1": aggregate[0], "aggregate_2": aggregate[1],
                  "named_1": named[0], "named_2": named[1]}
        for row, (x, out) in enumerate(zip(state["particles"], y), start=1):
            values.update({f"x_r{row}_1": x[0], f"x_r{row}_2": x[1], f"out_r{row}_1": out[0], f"out_r{row}_2": out[1]})
        return {key: float(value) for key, value in values.items()}

    def still(self) -> Figure:
        state = self.state
        alpha, y, aggregate = forward(state)
        x = np.array(state["particles"])
        fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.7), layout="constrained")
        name = state["aggregation"]
        panels = [(axes[0], x, alpha, "D", f"population X and its {name} α(X)"),
                  (axes[1], y, aggregate, "s", f"outputs Y = equivariant(X) and α(Y)")]
        for ax, points, pooled, marker, title in panels:
            for row, (label, (u, v)) in enumerate(zip(state["labels"], points), start=1):
                colour = COLOURS[LETTERS.index(label)]
                ax.plot(u, v, "o", markersize=17, color=colour, markeredgecolor="white")
                ax.text(u, v, label, ha="center", va="center", color="white", fontsize=10, weight="bold")
                ax.text(u + 0.09, v - 0.13, f"row {row}", fontsize=9, color="0.25")
            shown = np.clip(pooled, -1, 1)
            # an aggregate off the panel (the sum can be) is drawn hollow at its edge
            ax.plot(*shown, marker, markersize=9, color="black", zorder=3,
                    markerfacecolor="black" if np.allclose(shown, pooled) else "white")
            ax.text(shown[0] + 0.07, shown[1] + 0.07, "α(X)" if marker == "D" else "α(Y)", fontsize=10, zorder=3)
            ax.set(xlim=(-1.1, 1.1), ylim=(-1.1, 1.1), aspect="equal", title=title)
            ax.tick_params(labelsize=9)
            ax.title.set_fontsize(10)
        return fig
