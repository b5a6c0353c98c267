r"""The constant predictor of the circle experiment: the scale that every test MSE is read against."""

from __future__ import annotations

from torch import Tensor

from .sweep import circle_errors

__all__ = ["constant_mse"]


def constant_mse(y: Tensor) -> float:
    r"""The test MSE of predicting, for every population, the mean circle of the targets ``y`` ``[B, 3]``
    (centre, radius):

    .. math:: \frac{1}{B} \sum_b \left[ (r_b - \bar r)^2 + \lVert c_b - \bar c \rVert^2 \right],

    the best any model can do that ignores its input (:func:`~setfuncs.experiments.circle.circle_errors`).
    """
    return circle_errors(y.mean(0).expand_as(y), y)["mse"]
