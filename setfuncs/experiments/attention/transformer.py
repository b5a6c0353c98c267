r"""The spatial transformer of Attend-Infer-Repeat: read a glimpse where ``z_where`` says, write it back.

:math:`z_\text{where} = (s, t_x, t_y)` describes a square window of the canvas in the normalised
frame :math:`[-1, 1]^2` (``affine_grid`` with ``align_corners=False``): centre :math:`(t_x, t_y)`
and half-side :math:`s`, so the window covers a fraction :math:`s` of the canvas's width and
height. Reading (**glimpse**) samples the canvas at

.. math::
    u = A\,v + t, \qquad A = \begin{pmatrix} s & 0 \\ 0 & s \end{pmatrix}, \quad v \in [-1, 1]^2

for every glimpse pixel :math:`v`; writing (**place**) uses the inverse map
:math:`v = (u - t) / s` for every canvas pixel :math:`u`, with zeros outside the window. Both use
bilinear interpolation (:func:`torch.nn.functional.grid_sample`) and are differentiable in
:math:`z_\text{where}`. The scale is clamped to at least :data:`MIN_SCALE` so the inverse exists.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["MIN_SCALE", "where_to_theta", "inverse_theta", "affine_grid", "glimpse", "place", "where_to_boxes"]

#: The smallest scale the transformer uses (larger scales pass unchanged).
MIN_SCALE = 0.05


def _check_where(z_where: Tensor, batch: int) -> Tensor:
    if z_where.ndim != 2 or z_where.shape != (batch, 3):
        raise ValueError(f"z_where must be [B, 3] = (scale, shift_x, shift_y) for the B = {batch} images, "
                         f"got shape {tuple(z_where.shape)}")
    return z_where


def where_to_theta(z_where: Tensor) -> Tensor:
    """The affine map ``[B, 2, 3]`` from glimpse to canvas coordinates: ``[[s, 0, t_x], [0, s, t_y]]``."""
    s = z_where[:, 0].clamp_min(MIN_SCALE)
    zero = torch.zeros_like(s)
    return torch.stack([torch.stack([s, zero, z_where[:, 1]], -1),
                        torch.stack([zero, s, z_where[:, 2]], -1)], 1)


def inverse_theta(z_where: Tensor) -> Tensor:
    """The inverse map ``[B, 2, 3]`` from canvas to glimpse coordinates: ``[[1/s, 0, -t_x/s], [0, 1/s, -t_y/s]]``."""
    s = z_where[:, 0].clamp_min(MIN_SCALE)
    zero = torch.zeros_like(s)
    return torch.stack([torch.stack([1 / s, zero, -z_where[:, 1] / s], -1),
                        torch.stack([zero, 1 / s, -z_where[:, 2] / s], -1)], 1)


def affine_grid(theta: Tensor, h: int, w: int) -> Tensor:
    r"""The sampling grid ``[B, h, w, 2]`` of the affine maps ``theta [B, 2, 3]``: at output pixel
    :math:`(j, k)`, :math:`\theta\,(u_k, v_j, 1)^\top` with the pixel centres
    :math:`u_k = (2k + 1)/w - 1`, :math:`v_j = (2j + 1)/h - 1` (``align_corners=False``).

    What :func:`torch.nn.functional.affine_grid` computes, as one batched matrix product, which
    ``torch.vmap`` batches over an ensemble's models at once (it runs ``affine_grid`` model by model)
    (``tests/test_attention_model.py``)."""
    u = (2 * torch.arange(w, dtype=theta.dtype, device=theta.device) + 1) / w - 1
    v = (2 * torch.arange(h, dtype=theta.dtype, device=theta.device) + 1) / h - 1
    base = torch.stack([u.expand(h, w), v[:, None].expand(h, w), torch.ones(h, w, dtype=theta.dtype,
                                                                            device=theta.device)], -1)
    return torch.matmul(base.view(1, h * w, 3), theta.transpose(1, 2)).view(theta.shape[0], h, w, 2)


def glimpse(canvas: Tensor, z_where: Tensor, size: int) -> Tensor:
    """The ``size x size`` glimpses ``[B, size, size]`` of the canvases ``[B, H, W]`` at ``z_where [B, 3]``."""
    if canvas.ndim != 3:
        raise ValueError(f"canvas must be [B, H, W], got shape {tuple(canvas.shape)}")
    theta = where_to_theta(_check_where(z_where, canvas.shape[0]))
    grid = affine_grid(theta, size, size)
    return F.grid_sample(canvas.unsqueeze(1), grid, mode="bilinear", padding_mode="zeros",
                         align_corners=False).squeeze(1)


def place(glimpses: Tensor, z_where: Tensor, canvas_size: int | tuple[int, int]) -> Tensor:
    """Glimpses ``[B, g, g]`` written into blank canvases ``[B, H, W]`` at ``z_where`` (the inverse of
    :func:`glimpse`; zeros outside the window)."""
    if glimpses.ndim != 3:
        raise ValueError(f"glimpses must be [B, g, g], got shape {tuple(glimpses.shape)}")
    h, w = (canvas_size, canvas_size) if isinstance(canvas_size, int) else canvas_size
    theta = inverse_theta(_check_where(z_where, glimpses.shape[0]))
    grid = affine_grid(theta, h, w)
    return F.grid_sample(glimpses.unsqueeze(1), grid, mode="bilinear", padding_mode="zeros",
                         align_corners=False).squeeze(1)


def where_to_boxes(z_where: Tensor, canvas_size: int) -> Tensor:
    """Pixel boxes ``(x0, y0, x1, y1)`` ``[..., 4]`` of ``z_where [..., 3]`` on a square canvas."""
    s = z_where[..., 0].clamp_min(MIN_SCALE)
    half = canvas_size / 2
    cx, cy = (z_where[..., 1] + 1) * half, (z_where[..., 2] + 1) * half
    return torch.stack([cx - s * half, cy - s * half, cx + s * half, cy + s * half], -1)
