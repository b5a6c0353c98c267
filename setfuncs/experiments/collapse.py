r"""Runs that collapsed to a constant prediction, detected in every sweep.

A model *collapses* when its output stops depending on the population: every test population gets
(almost) the same prediction. Its loss then sits at the best constant's (e.g. the Beta fitted to the
marginal of the mixture weights), which can look like slow learning. Every run records the
**spread ratio** of its test predictions,

.. math::
    \rho = \frac{\frac1K \sum_k \operatorname{std}_m \hat y_{m,k}}{\frac1K \sum_k \operatorname{std}_m y_{m,k}},

the spread of the predictions across the :math:`M` test populations relative to the spread of the
targets (for a classifier: predicted probabilities against one-hot labels), and is marked
``collapsed`` when :math:`\rho <` :data:`COLLAPSE_RATIO`. A model that predicts the target exactly
has :math:`\rho \approx 1`; a collapsed one about :math:`10^{-5}` (chapter 9). Tables count the
collapsed runs of each configuration and keep them out of peak statistics, never out of sight.
"""

from __future__ import annotations

from torch import Tensor

__all__ = ["COLLAPSE_RATIO", "spread_ratio", "collapse_record"]

#: Below this spread ratio a run counts as collapsed.
COLLAPSE_RATIO = 0.05


def spread_ratio(predictions: Tensor, targets: Tensor) -> float:
    """:math:`\\rho` above for ``predictions`` and ``targets`` of shape ``[M]`` or ``[M, K]`` (``M >= 2``)."""
    predictions, targets = (t.detach().double().reshape(t.shape[0], -1) for t in (predictions, targets))
    if predictions.shape != targets.shape or predictions.shape[0] < 2:
        raise ValueError(f"need predictions and targets of one shape [M, K] with M >= 2, got "
                         f"{tuple(predictions.shape)} and {tuple(targets.shape)}")
    target_spread = float(targets.std(dim=0).mean())
    if not target_spread > 0:
        raise ValueError("the targets do not vary across the test populations, so no spread can be compared")
    return float(predictions.std(dim=0).mean()) / target_spread


def collapse_record(predictions: Tensor, targets: Tensor) -> dict:
    """``{"spread_ratio": rho, "collapsed": rho < COLLAPSE_RATIO}`` for a run's test predictions."""
    ratio = spread_ratio(predictions, targets)
    return {"spread_ratio": ratio, "collapsed": bool(ratio < COLLAPSE_RATIO)}
