"""Figures more than one chapter draws."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np
import torch
from torch import Tensor

if TYPE_CHECKING:
    import matplotlib.axis

__all__ = ["pair_grid", "plain_log_ticks"]


def pair_grid(aggregate: Callable[[Tensor], Tensor], low: float, high: float,
              points: int = 161) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Evaluate an aggregation on every population ``{x1, x2}`` of two scalars in ``[low, high]^2``.

    Returns the meshgrids ``x1, x2`` and the aggregate, each ``[points, points]``, ready for
    ``plt.contourf(x1, x2, values)``. The grid is one batch ``[points**2, 2, 1]`` in float64.
    """
    if not low < high:
        raise ValueError(f"pair_grid needs low < high, got [{low}, {high}]")
    axis = torch.linspace(low, high, points, dtype=torch.float64)
    x1, x2 = torch.meshgrid(axis, axis, indexing="xy")
    populations = torch.stack([x1.flatten(), x2.flatten()], dim=1).unsqueeze(-1)
    values = aggregate(populations).reshape(points, points)
    return x1.numpy(), x2.numpy(), values.detach().numpy()


def plain_log_ticks(axis: matplotlib.axis.Axis) -> None:
    """Label the ticks of a logarithmic ``axis`` (``ax.xaxis`` or ``ax.yaxis``, after its log scale is
    set) as plain numbers (``0.01, 0.1, 1``; ``0.2, 0.3`` where matplotlib labels the minor ticks), not
    as powers of ten: a power's exponent is set at 70 % of the tick labels' size, too small to read."""
    from matplotlib.ticker import LogFormatter

    class _PlainLogFormatter(LogFormatter):
        def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
            return f"{x:g}"

    axis.set_major_formatter(_PlainLogFormatter())
    axis.set_minor_formatter(_PlainLogFormatter())
