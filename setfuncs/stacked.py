r"""Many small models trained side by side: linear layers with a leading model axis.

:class:`StackedLinear` holds ``M`` independent linear layers,

.. math:: y_m = x_m W_m + b_m, \qquad m = 1, \dots, M,

applied to ``M`` copies of a batch in one ``einsum``. The models share nothing: the loss of a stack
is the sum of the models' losses, so every model's gradient is its own, and Adam (which adapts every
weight separately) trains each model exactly as it would train it alone on the same batches. The
chapter *Sum decomposition* trains dozens of sum decompositions this way in the time of a few.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .population import check_sizes

__all__ = ["StackedLinear"]


class StackedLinear(nn.Module):
    """``models`` independent linear layers side by side: ``[M, ..., in] -> [M, ..., out]``.

    Args:
        models: the number ``M`` of independent layers.
        in_features, out_features: sizes of every layer.
        fan_in: per model, the fan-in used for the initialisation range (default ``in_features``);
            :class:`torch.nn.Linear` draws weights and biases from
            :math:`U(-1/\\sqrt{\\text{fan-in}}, 1/\\sqrt{\\text{fan-in}})`, and so does every model here.
    """

    def __init__(self, models: int, in_features: int, out_features: int, fan_in: Tensor | None = None) -> None:
        super().__init__()
        check_sizes(models=models, in_features=in_features, out_features=out_features)
        fan_in = torch.full((models,), float(in_features)) if fan_in is None else torch.as_tensor(fan_in).float()
        if fan_in.shape != (models,) or not bool((fan_in > 0).all()):
            raise ValueError(f"fan_in must hold one positive number per model ({models}), got {fan_in.tolist()}")
        bound = fan_in.rsqrt().view(models, 1, 1)
        self.weight = nn.Parameter((2 * torch.rand(models, in_features, out_features) - 1) * bound)
        self.bias = nn.Parameter((2 * torch.rand(models, 1, out_features) - 1) * bound)

    def forward(self, x: Tensor) -> Tensor:
        """``x: [M, ..., in]`` (one slice per model) -> ``[M, ..., out]``."""
        if x.dim() < 2 or x.shape[0] != self.weight.shape[0] or x.shape[-1] != self.weight.shape[1]:
            raise ValueError(f"StackedLinear expects [M={self.weight.shape[0]}, ..., in={self.weight.shape[1]}], "
                             f"got {tuple(x.shape)}")
        bias = self.bias.view(len(self.bias), *[1] * (x.dim() - 2), -1)
        return torch.einsum("m...i,mio->m...o", x, self.weight) + bias

    def extra_repr(self) -> str:
        m, i, o = self.weight.shape
        return f"models={m}, in_features={i}, out_features={o}"
