r"""Permutation-equivariant layers: the *combine* stage of a Deep Set.

:class:`Equivariant` is eq. (1) of the paper, :math:`\operatorname{equivariant}(X) = \sigma(X - \mathbf{1}\alpha(X))`,
with :math:`\sigma` a per-particle feed-forward layer and :math:`\alpha` any aggregation, plain or
learnable. :class:`DeepSetsEquivariant` is the form of Zaheer et al. (2017),
:math:`\sigma(X\Gamma - \mathbf{1}\,\operatorname{pool}(X)\Lambda)`. Both commute with permutations
of the particles because :math:`\alpha(X)` is the same for every particle and :math:`\sigma` acts
on each particle alone. Padded particles come out as zeros.
"""

from __future__ import annotations

from torch import Tensor, nn

from .plain import Aggregation, zero_padding
from .population import check_parameters, check_population, check_sizes
from .registry import aggregation as make_aggregation

__all__ = ["Equivariant", "DeepSetsEquivariant", "make_activation"]

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU, "elu": nn.ELU, "gelu": nn.GELU, "identity": nn.Identity}


def make_activation(name: str) -> nn.Module:
    """A fresh activation module by name (``tanh relu elu gelu identity``)."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; choose one of {sorted(ACTIVATIONS)}")
    return ACTIVATIONS[name]()


def _build(spec: str | Aggregation, features: int, **kwargs) -> Aggregation:
    agg = make_aggregation(spec, features=features, **kwargs) if isinstance(spec, str) else spec
    if agg.out_features not in (None, features):
        raise ValueError(f"an equivariant layer subtracts alpha(X) from every particle, so the "
                         f"aggregation must return {features} features; {agg!r} returns {agg.out_features}")
    return agg


class _EquivariantLayer(nn.Module):
    """Shared plumbing: the aggregation, the activation, the input checks and clean padding."""

    def __init__(self, in_features: int, out_features: int, aggregation: str | Aggregation,
                 activation: str, **kwargs) -> None:
        super().__init__()
        check_sizes(in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        self.aggregate = _build(aggregation, in_features, **kwargs)
        self.activation = make_activation(activation)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        check_population(x, mask, self.in_features)
        check_parameters(self, x)
        x = zero_padding(x, mask)
        return zero_padding(self.activation(self.combine(x, self.aggregate(x, mask))), mask)

    def combine(self, x: Tensor, pooled: Tensor) -> Tensor:
        """The pre-activation output from the particles ``[B, N, in]`` and their aggregate ``[B, in]``."""
        raise NotImplementedError


class Equivariant(_EquivariantLayer):
    r"""Eq. (1): :math:`\sigma(X - \mathbf{1}\alpha(X))`, mapping ``[B, N, in] -> [B, N, out]``.

    Args:
        in_features, out_features: particle features before and after the layer.
        aggregation: a spec (``"max"``, ``"r-lse"``, ...) or an :class:`~setfuncs.plain.Aggregation` instance.
        activation: nonlinearity of :math:`\sigma` after its linear map.
        **kwargs: passed to the aggregation when it is given by spec.
    """

    def __init__(self, in_features: int, out_features: int, aggregation: str | Aggregation = "max",
                 activation: str = "tanh", **kwargs) -> None:
        super().__init__(in_features, out_features, aggregation, activation, **kwargs)
        self.linear = nn.Linear(in_features, out_features)

    def combine(self, x: Tensor, pooled: Tensor) -> Tensor:
        return self.linear(x - pooled.unsqueeze(1))


class DeepSetsEquivariant(_EquivariantLayer):
    r"""Zaheer et al.'s layer :math:`\sigma(X\Gamma - \mathbf{1}\,\operatorname{pool}(X)\Lambda)`.

    :math:`\Gamma` has a bias, :math:`\Lambda` none; ``pool`` is any aggregation.
    """

    def __init__(self, in_features: int, out_features: int, aggregation: str | Aggregation = "max",
                 activation: str = "tanh", **kwargs) -> None:
        super().__init__(in_features, out_features, aggregation, activation, **kwargs)
        self.gamma = nn.Linear(in_features, out_features)
        self.lam = nn.Linear(in_features, out_features, bias=False)

    def combine(self, x: Tensor, pooled: Tensor) -> Tensor:
        return self.gamma(x) - self.lam(pooled).unsqueeze(1)
