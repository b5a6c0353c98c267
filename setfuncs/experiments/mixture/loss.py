r"""The model's output: a Beta distribution over the smaller mixture weight, and its training loss.

A Deep Set ``2 -> 2`` maps a population to two raw outputs :math:`(u, v)`, read as the
concentrations of a Beta distribution

.. math::
    a = \operatorname{softplus}(u) + \epsilon, \qquad b = \operatorname{softplus}(v) + \epsilon,
    \qquad \epsilon = 10^{-3},

and is trained to maximise the log-likelihood of the smaller true weight :math:`w` (the paper):

.. math::
    -\log \operatorname{Beta}(w; a, b) = -(a - 1)\log w - (b - 1)\log(1 - w)
        + \log\Gamma(a) + \log\Gamma(b) - \log\Gamma(a + b).

The *point estimate* of the weight is the Beta mean :math:`a / (a + b)` (:func:`beta_mean`); the
mode :math:`(a - 1)/(a + b - 2)` exists only for :math:`a, b > 1`, while the mean is always defined
and minimises the expected squared error under the model's own belief.
"""

from __future__ import annotations

import numpy as np
import scipy.stats
import torch
from torch import Tensor
from torch.nn.functional import softplus

__all__ = ["EPSILON", "beta_concentrations", "beta_log_likelihood", "beta_nll", "beta_mean",
           "beta_quantiles"]

#: Added to both softplus outputs, so the concentrations stay positive (and the Beta proper).
EPSILON = 1e-3


def _check_output(output: Tensor) -> None:
    if not isinstance(output, Tensor) or output.dim() != 2 or output.shape[1] != 2:
        shape = tuple(output.shape) if isinstance(output, Tensor) else type(output).__name__
        raise ValueError(f"the model output must have shape [B, 2] (the raw Beta concentrations), "
                         f"got {shape}; build the Deep Set with out_features=2")


def beta_concentrations(output: Tensor) -> tuple[Tensor, Tensor]:
    """``(a, b)``, each ``[B]``, from the raw model output ``[B, 2]``: softplus plus :data:`EPSILON`."""
    _check_output(output)
    concentrations = softplus(output) + EPSILON
    return concentrations[:, 0], concentrations[:, 1]


def beta_log_likelihood(output: Tensor, w: Tensor) -> Tensor:
    """:math:`\\log \\operatorname{Beta}(w; a, b)` per population, ``[B]``; ``w`` is ``[B]`` or ``[B, 1]``
    in ``(0, 1)``."""
    a, b = beta_concentrations(output)
    w = w.reshape(-1).to(output.dtype)
    if w.shape[0] != a.shape[0]:
        raise ValueError(f"need one weight per population: output has {a.shape[0]} rows, w has "
                         f"{w.shape[0]} values")
    if bool(((w <= 0) | (w >= 1)).any()):
        raise ValueError("the weights must lie strictly between 0 and 1 (the Beta's support)")
    return ((a - 1) * torch.log(w) + (b - 1) * torch.log1p(-w)
            + torch.lgamma(a + b) - torch.lgamma(a) - torch.lgamma(b))


def beta_nll(output: Tensor, y: Tensor) -> Tensor:
    """Training loss for :func:`setfuncs.train.fit`: the mean negative log-likelihood of ``y`` ``[B, 1]``."""
    return -beta_log_likelihood(output, y).mean()


def beta_mean(output: Tensor) -> Tensor:
    """The point estimate :math:`a / (a + b)` of the smaller weight, ``[B]``."""
    a, b = beta_concentrations(output)
    return a / (a + b)


def beta_quantiles(output: Tensor, q: float | list[float] | np.ndarray) -> np.ndarray:
    """Quantiles of the model's Beta distribution, ``[B, len(q)]`` (float64; scipy's ``beta.ppf``)."""
    q = np.atleast_1d(np.asarray(q, dtype=float))
    if q.ndim != 1 or not bool(((q >= 0) & (q <= 1)).all()):
        raise ValueError(f"quantile levels must be numbers in [0, 1], got {q.tolist()}")
    a, b = (c.detach().double().cpu().numpy()[:, None] for c in beta_concentrations(output))
    return scipy.stats.beta.ppf(q[None, :], a, b)
