"""Figures more than one chapter draws."""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import Tensor

__all__ = ["pair_grid"]


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
