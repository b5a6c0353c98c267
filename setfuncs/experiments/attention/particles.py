r"""Populations from canvases: the grey-scale image as a two-dimensional density.

A canvas :math:`I \in [0, 1]^{H \times W}` defines the piecewise-constant density

.. math::
    p(u) = \frac{I_{jk}}{\sum_{j'k'} I_{j'k'}} \cdot \frac{HW}{4}
    \quad \text{for } u \text{ in pixel } (j, k),

on the normalised frame :math:`[-1, 1]^2` of :func:`torch.nn.functional.affine_grid`
(``align_corners=False``: pixel :math:`(j, k)` -- row :math:`j`, column :math:`k` -- covers
:math:`x \in [2k/W - 1, 2(k+1)/W - 1]`, :math:`y \in [2j/H - 1, 2(j+1)/H - 1]`). A population
of :math:`n` particles :math:`u_1, \dots, u_n \in [-1, 1]^2` is drawn i.i.d. from :math:`p`:
choose a pixel with probability proportional to its intensity, then a point uniformly inside it.
Each particle is ``(x, y)``, the order of ``affine_grid``'s last axis.

**Empty canvases** (intensity sum 0, i.e. no digit) have no density; they are part of the data, so
by rule their particles are uniform over the whole canvas (every pixel equally likely). A model
tells them apart by the spread of the population.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

__all__ = ["sample_particles", "pixel_probabilities"]


def _check_canvases(canvases: Tensor) -> Tensor:
    canvases = torch.as_tensor(canvases)
    if canvases.ndim != 3 or canvases.shape[1] < 1 or canvases.shape[2] < 1:
        raise ValueError(f"canvases must be a tensor [M, H, W], got shape {tuple(canvases.shape)}; "
                         f"add a batch axis for a single canvas (canvas[None])")
    if not torch.isfinite(canvases).all() or (canvases < 0).any():
        raise ValueError("canvas intensities must be finite and non-negative (a density needs weights >= 0)")
    return canvases.float()


def pixel_probabilities(canvases: Tensor) -> Tensor:
    """The probability of each pixel ``[M, H, W]``: intensity / its sum, uniform for an empty canvas."""
    canvases = _check_canvases(canvases)
    flat = canvases.flatten(1)
    total = flat.sum(1, keepdim=True)
    uniform = torch.full_like(flat, 1.0 / flat.shape[1])
    probs = torch.where(total > 0, flat / total.clamp_min(1e-30), uniform)
    return probs.view_as(canvases)


def sample_particles(canvases: Tensor | np.ndarray, n: int, generator: torch.Generator | None = None) -> Tensor:
    """``n`` particles per canvas ``[M, n, 2]`` (float32 ``(x, y)`` in ``[-1, 1]``) drawn from the
    canvas density (module docstring).

    Args:
        canvases: ``[M, H, W]`` non-negative intensities.
        n: the population size (a positive int; the paper uses 5, 20, 200 and 1,000).
        generator: the random source (None: torch's global one).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n, the particles per canvas, must be a positive int (e.g. 200), got {n!r}")
    probs = pixel_probabilities(torch.as_tensor(canvases))
    m, h, w = probs.shape
    index = torch.multinomial(probs.flatten(1), int(n), replacement=True, generator=generator)
    rows, cols = index // w, index % w
    jitter = torch.rand(m, int(n), 2, generator=generator)
    x = (2 * (cols + jitter[..., 0]) / w - 1).clamp(-1, 1)
    y = (2 * (rows + jitter[..., 1]) / h - 1).clamp(-1, 1)
    return torch.stack([x, y], dim=-1)
