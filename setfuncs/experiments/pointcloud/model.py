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

The classifier is a :class:`setfuncs.model.DeepSet` with ``embed_layers=0`` (no per-particle
layer: the reference's first layer is already equivariant and aggregates the raw coordinates) and
``process_layers=2``; :class:`PointCloudClassifier` only names the reference's arguments and defaults.
"""

from __future__ import annotations

from setfuncs.model import DeepSet

__all__ = ["PointCloudClassifier"]


class PointCloudClassifier(DeepSet):
    """Equivariant layers on ``[B, N, 3]`` coordinates, an aggregation, and an MLP to class logits
    ``[B, classes]``: a :class:`~setfuncs.model.DeepSet` without embedding.

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
        if equivariant_layers < 1 or classes < 2:
            raise ValueError(f"need equivariant_layers >= 1 and classes >= 2, got {equivariant_layers} "
                             f"and {classes}")
        super().__init__(in_features, classes, spec, hidden=hidden, embed_layers=0,
                         equivariant_layers=equivariant_layers, process_layers=2, activation=activation,
                         dropout=dropout, steps=steps)
