r"""Chapter 5's explorable: divide a population into parts, aggregate each part, combine the parts.

A population of scalar particles is divided into :math:`K` parts; each part is reduced to a
*partial aggregate*, and the partial aggregates are combined by a rule. Some rules give the whole
population's aggregate for every division (conquering is invariant to division), others do not:

=================  =====================================  ===================================
``aggregation``    partial aggregate of a part            combined
=================  =====================================  ===================================
``sum``            its sum                                sum of the sums (exact)
``mean_counts``    its mean :math:`m_k` and size          :math:`\sum_k n_k m_k / \sum_k n_k` (exact)
                   :math:`n_k`
``mean_naive``     its mean                               mean of the means (exact only for
                                                          parts of equal size)
``max``, ``min``   its max (min)                          max of the maxes (exact)
``lse``            its :math:`\operatorname{L\Sigma E}`   :math:`\operatorname{L\Sigma E}` of
                                                          the parts' (exact)
``median``         its median                             median of the medians (not exact)
``noisy_or``       :math:`1 - \prod_i (1 - \sigma(x_i))`  :math:`1 - \prod_k (1 - a_k)` (exact)
=================  =====================================  ===================================

The reader drags particles along their row (the value) and between rows (the part), adds and
removes them, picks :math:`K` and the aggregation; the read-outs are each part's partial aggregate,
the combined value and the whole population's, computed here with setfuncs's aggregations.

The state: ``values`` and ``lanes`` (:data:`CAPACITY` particles, the first ``size`` of which are the
population; particle :math:`i` is in part ``lanes[i] % parts``), ``size``, ``parts`` and
``aggregation``.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from matplotlib.figure import Figure

from ..plain import Median, Sum
from ..registry import aggregation
from .base import Explorable
from .esm import module_source
from .rng import uniforms

__all__ = ["Parts", "AGGREGATIONS", "CAPACITY", "MAX_PARTS", "VALUE_RANGE"]

#: The most particles a population can have (the state holds them all; ``size`` says how many count).
CAPACITY = 24
#: The most parts the slider offers.
MAX_PARTS = 6
#: The particles' values (the noisy-or reads them as logits, probabilities sigma(x)).
VALUE_RANGE = (-4.0, 4.0)
#: The select's options: name -> (label, how the parts are combined, exact for every division?).
AGGREGATIONS = {
    "sum": ("sum", "sum of the parts' sums", True),
    "mean_counts": ("mean via (mean, count) pairs", "Σ n_k·mean_k / Σ n_k", True),
    "mean_naive": ("mean via the mean of means", "mean of the parts' means", False),
    "max": ("max", "max of the parts' maxima", True),
    "min": ("min", "min of the parts' minima", True),
    "lse": ("LΣE", "LΣE of the parts' LΣEs", True),
    "median": ("median", "median of the parts' medians", False),
    "noisy_or": ("noisy-or of σ(x)", "1 − Π_k (1 − a_k)", True),
}
#: The parts' colours (Tableau 10, as on the page).
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def _noisy_or(x: torch.Tensor) -> torch.Tensor:
    r""":math:`1 - \prod_i (1 - \sigma(x_i))`, a sum in disguise: :math:`-\operatorname{expm1}(-\sum_i \operatorname{softplus}(x_i))`."""
    return -torch.expm1(-Sum()(F.softplus(x)))


def partial(kind: str, x: torch.Tensor) -> float:
    """The partial aggregate of one part ``x: [1, n, 1]`` (float64)."""
    if kind == "noisy_or":
        return _noisy_or(x).item()
    name = {"mean_counts": "mean", "mean_naive": "mean"}.get(kind, kind)
    return aggregation(name)(x).item()


def combine(kind: str, partials: list[float], counts: list[int]) -> float:
    """The combined value from the non-empty parts' partial aggregates (and their sizes)."""
    a = torch.tensor(partials, dtype=torch.float64).reshape(1, -1, 1)
    if kind == "mean_counts":
        n = torch.tensor(counts, dtype=torch.float64).reshape(1, -1, 1)
        return (Sum()(n * a) / Sum()(n)).item()
    if kind == "noisy_or":  # the partials are probabilities: 1 - prod_k (1 - a_k)
        return -torch.expm1(Sum()(torch.log1p(-a))).item()
    if kind == "median":
        return Median()(a).item()
    return aggregation({"sum": "sum", "mean_naive": "mean", "max": "max", "min": "min", "lse": "lse"}[kind])(a).item()


def divide(state: dict[str, Any]) -> list[list[float]]:
    """The parts of ``state``'s population: ``parts`` lists of values (some may be empty)."""
    k = int(state["parts"])
    parts: list[list[float]] = [[] for _ in range(k)]
    for value, lane in zip(state["values"][: int(state["size"])], state["lanes"]):
        parts[int(lane) % k].append(value)
    return parts


class Parts(Explorable):
    """A population divided into parts: each part's partial aggregate, their combination, the whole's."""

    module = "parts"
    _esm = module_source(module)
    probes = [{"aggregation": "mean_naive", "parts": 4}, {"aggregation": "median", "parts": 2, "size": 9},
              {"aggregation": "noisy_or", "parts": 5}, {"aggregation": "lse", "parts": 6, "size": 17},
              {"aggregation": "max", "parts": 1, "size": 4}]

    def __init__(self, kind: str = "median", parts: int = 3, size: int = 12, seed: int = 23) -> None:
        if kind not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got {kind!r}")
        if not 1 <= parts <= MAX_PARTS or not 1 <= size <= CAPACITY:
            raise ValueError(f"parts must lie in [1, {MAX_PARTS}] and size in [1, {CAPACITY}], got {parts}, {size}")
        draws = uniforms(seed, 2 * CAPACITY)
        low, high = VALUE_RANGE
        state = {"values": [round(low + (high - low) * u, 2) for u in draws[:CAPACITY]],
                 "lanes": [int(u * MAX_PARTS) for u in draws[CAPACITY:]],
                 "size": size, "parts": parts, "aggregation": kind}
        values = self.readouts(state)
        label, rule, exact = AGGREGATIONS[kind]
        sizes = [len(part) for part in divide(state)]
        super().__init__(state, alt=(
            f"{size} particles on a number line from {low:g} to {high:g}, in {parts} rows, one per part, of "
            f"{', '.join(map(str, sizes))} particles, coloured by part, and below them all particles in one "
            f"grey row. Beside them each part's {label} as a coloured dot on an axis of aggregate values, then "
            f"the combined value ({rule}) as a black diamond at {values['combined']:.3g} and the whole "
            f"population's {label} as a ring at {values['whole']:.3g}"
            + (", the same." if exact else f", {abs(values['difference']):.3g} apart.")))

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        kind = state["aggregation"]
        parts = divide(state)
        out: dict[str, float] = {}
        partials, counts = [], []
        for k, part in enumerate(parts):
            if part:
                partials.append(partial(kind, torch.tensor(part, dtype=torch.float64).reshape(1, -1, 1)))
                counts.append(len(part))
                out[f"part{k + 1}"] = partials[-1]
        whole = partial(kind, torch.tensor(state["values"][: int(state["size"])], dtype=torch.float64).reshape(1, -1, 1))
        combined = combine(kind, partials, counts)
        return {**out, "combined": combined, "whole": whole, "difference": combined - whole}

    def still(self) -> Figure:
        state = self.state
        kind, parts = state["aggregation"], divide(state)
        label, rule, _ = AGGREGATIONS[kind]
        values = self.readouts(state)
        k, everyone = len(parts), state["values"][: int(state["size"])]
        rows = k + 2  # the parts, then "combined" (right) and "all" / "whole"
        fig, (left, right) = plt.subplots(1, 2, figsize=(7.4, 0.42 * rows + 1.5), layout="constrained",
                                          width_ratios=[1.3, 1])
        on_scale = kind not in ("sum", "noisy_or")  # partial aggregates in the particles' units
        for r, part in enumerate(parts):
            left.axhline(r, color="0.85", linewidth=0.8, zorder=0)
            left.plot(part, [r] * len(part), "o", color=COLOURS[r], markeredgecolor="white", markersize=8)
            if on_scale and f"part{r + 1}" in values:
                left.plot([values[f"part{r + 1}"]] * 2, [r - 0.3, r + 0.3], color=COLOURS[r], linewidth=2.5)
        left.axhline(k + 1, color="0.85", linewidth=0.8, zorder=0)
        left.plot(everyone, [k + 1] * len(everyone), "o", color="0.45", markeredgecolor="white", markersize=8)
        if on_scale:
            left.plot([values["whole"]] * 2, [k + 0.7, k + 1.3], color="black", linewidth=2.5)
        left.set(xlim=(VALUE_RANGE[0] - 0.3, VALUE_RANGE[1] + 0.3), ylim=(rows - 0.5, -0.5), xlabel="particle value",
                 title=f"{len(everyone)} particles in {k} parts")
        left.set_yticks(list(range(k)) + [k + 1], [f"part {r + 1}" for r in range(k)] + ["all"])
        shown = [values["combined"], values["whole"]]
        for r in range(k):
            right.axhline(r, color="0.85", linewidth=0.8, zorder=0)
            if f"part{r + 1}" in values:
                right.plot(values[f"part{r + 1}"], r, "o", color=COLOURS[r], markersize=10)
                shown.append(values[f"part{r + 1}"])
            else:
                right.text(0.5, r, "empty", transform=right.get_yaxis_transform(), ha="center", va="center", fontsize=9)
        for r in (k, k + 1):
            right.axhline(r, color="0.85", linewidth=0.8, zorder=0)
        right.plot(values["combined"], k, "D", color="black", markersize=9)
        right.plot(values["whole"], k + 1, "o", markerfacecolor="none", markeredgecolor="black", markersize=12,
                   markeredgewidth=2)
        right.axvline(values["whole"], color="0.5", linestyle="--", linewidth=0.8)
        low, high = min(shown), max(shown)
        if on_scale:
            low, high = min(low, VALUE_RANGE[0]), max(high, VALUE_RANGE[1])
        if kind == "noisy_or":
            low, high = 0.0, 1.0
        pad = max(0.08 * (high - low), 0.05 * max(abs(high), abs(low), 1e-3))
        right.set(xlim=(low - pad, high + pad), ylim=(rows - 0.5, -0.5), title="partial aggregates", xlabel=label)
        right.set_yticks(list(range(rows)), [f"part {r + 1}" for r in range(k)] + ["combined", "whole"])
        fig.suptitle(f"{label}; combined: {rule}", fontsize=11)
        return fig
