r"""Inside the first equivariant layer: why mixture models with LSE stay where they start.

The first layer of a Deep Set computes eq. (1), :math:`\tanh(z_i)` with
:math:`z_i = W u_i + b` and :math:`u_i = x_i - \alpha(X)`. With :math:`\alpha = \operatorname{L\Sigma E}`
the aggregate exceeds the particles' maximum by up to :math:`\ln N`, so :math:`u_i` is shifted by
about :math:`-\ln N` and more of the :math:`z_i` land where tanh is flat (:math:`|z| > 2`, slope
below 0.07): their gradients vanish. :func:`first_layer_capture` reads :math:`u` and :math:`z` with
a forward hook on the layer's linear map.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

import setfuncs as sf

from ..sweeps import all_configurations, spec_of
from .data import test_populations
from .sweep import Budget, make_model

__all__ = ["SATURATION", "first_layer_capture", "saturated_share", "initial_first_layer"]

#: ``|z|`` above which a tanh unit counts as saturated (its slope is below ``1 - tanh(2)^2 ≈ 0.071``).
SATURATION = 2.0


def first_layer_capture(model: sf.DeepSet, x: Tensor) -> tuple[Tensor, Tensor]:
    r"""The input :math:`u = x_i - \alpha(X)` and the pre-activation :math:`z = W u + b` of the
    linear map of ``model``'s first equivariant layer (``model.combine[0].linear``), each
    ``[B, N, features]``, from one forward pass on the populations ``x`` without gradients."""
    captured = {}
    handle = model.combine[0].linear.register_forward_hook(
        lambda module, inputs, output: captured.update(u=inputs[0], z=output))
    try:
        with torch.no_grad():
            model(x)
    finally:
        handle.remove()
    return captured["u"], captured["z"]


def saturated_share(z: Tensor | np.ndarray, threshold: float = SATURATION) -> float:
    """The share of pre-activations with ``|z| > threshold``."""
    return float(np.mean(np.abs(np.asarray(z)) > threshold))


def initial_first_layer(spec: str, n: int, budget: Budget, populations: int = 64, seed: int = 5
                        ) -> tuple[float, float]:
    """The first equivariant layer of ``spec`` at initialisation (``torch.manual_seed(0)``) on
    ``populations`` test populations of ``n`` particles drawn with ``seed``: the mean of its input
    :math:`u` over particles and features, and its :func:`saturated_share`."""
    configuration = next((c for c in all_configurations() if spec_of(*c) == spec), None)
    if configuration is None:
        raise ValueError(f"{spec!r} is not a configuration of the mixture sweep")
    torch.manual_seed(0)
    model = make_model(*configuration, budget=budget)
    u, z = first_layer_capture(model, test_populations(populations, n, seed=seed).x)
    return u.mean().item(), saturated_share(z)
