r"""Deep Sets' point-cloud classifier with exchangeable aggregations (Table 2 of the paper).

The reference model (Zaheer et al. 2017, ``PointClouds/run.py``: ``DTanh(256, pool='max1')``) is
three equivariant layers of width 256 on the raw coordinates, a max over the particles, and a
two-layer classifier with dropout:

.. math::
    H^{(0)} &= X \in \mathbb R^{N \times 3}, \qquad
    H^{(l)} = \tanh\!\big((H^{(l-1)} - \mathbf 1\,\alpha_e(H^{(l-1)}))\,\Gamma_l + \mathbf 1 b_l^\top\big),
        \quad l = 1, 2, 3, \\
    y &= W_2\,\operatorname{drop}_{0.5}\!\big(\tanh(W_1\,\operatorname{drop}_{0.5}(\alpha_f(H^{(3)})) + c_1)\big) + c_2 .

Its layer ``PermEqui1_max`` is :math:`\Gamma(x - \max X)`, eq. (1) of the paper, so we build the
layers as :class:`~setfuncs.equivariant.Equivariant` (not the :math:`\Gamma/\Lambda` form of
:class:`~setfuncs.equivariant.DeepSetsEquivariant`, which the reference defines as
``PermEqui2_max`` but does not run). The paper exchanges only :math:`\alpha_e` (every
equivariant layer) and :math:`\alpha_f` (the final aggregation), named by a spec
``"<equivariant>/<final>"`` such as ``"max/max"`` (the reference) or ``"r-lse/r-lse"``.

Why not :class:`setfuncs.model.DeepSet`: it always embeds the particles with a per-particle layer
before its equivariant stack, while the reference's first layer is already equivariant and
aggregates the raw coordinates; the classifier here composes the same parts
(:class:`~setfuncs.equivariant.Equivariant`, :func:`~setfuncs.registry.aggregation`,
:func:`~setfuncs.model.mlp`) without that layer.
"""

from __future__ import annotations

from torch import Tensor, nn

from setfuncs.equivariant import Equivariant
from setfuncs.model import _learnable_kwargs, mlp, parse_spec
from setfuncs.population import check_parameters, check_population
from setfuncs.registry import aggregation

__all__ = ["PointCloudClassifier"]


class PointCloudClassifier(nn.Module):
    """Equivariant layers on ``[B, N, 3]`` coordinates, an aggregation, and an MLP to class logits.

    Args:
        classes: number of classes (logits out).
        spec: ``"<equivariant>/<final>"`` aggregations, e.g. ``"max/max"`` or ``"max/r-lse"``.
        hidden: width of every equivariant layer and of the classifier's hidden layer (the reference: 256).
        equivariant_layers: equivariant layers (the reference: 3; at least 1).
        dropout: dropout before each of the classifier's two linear layers (the reference: 0.5).
        activation: nonlinearity everywhere (the reference: tanh).
        steps: reads ``T`` of every recurrent aggregation.
        in_features: coordinates per particle.
    """

    def __init__(self, classes: int, spec: str = "max/max", hidden: int = 256, equivariant_layers: int = 3,
                 dropout: float = 0.5, activation: str = "tanh", steps: int = 3, in_features: int = 3) -> None:
        super().__init__()
        if equivariant_layers < 1 or classes < 2:
            raise ValueError(f"need equivariant_layers >= 1 and classes >= 2, got {equivariant_layers} "
                             f"and {classes}")
        self.spec, self.in_features = spec, in_features
        equivariant_spec, final_spec = parse_spec(spec)
        widths = [in_features] + [hidden] * equivariant_layers
        self.combine = nn.ModuleList(
            Equivariant(a, b, equivariant_spec, activation, **_learnable_kwargs(equivariant_spec, steps, {}))
            for a, b in zip(widths[:-1], widths[1:]))
        self.aggregate = aggregation(final_spec, features=hidden, **_learnable_kwargs(final_spec, steps, {}))
        self.process = mlp([self.aggregate.out_features or hidden, hidden, classes], activation, dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """Class logits ``[B, classes]`` of the clouds ``x: [B, N, 3]`` (``mask``: real particles)."""
        check_population(x, mask, self.in_features)
        check_parameters(self, x)
        for layer in self.combine:
            x = layer(x, mask)
        return self.process(self.aggregate(x, mask))
