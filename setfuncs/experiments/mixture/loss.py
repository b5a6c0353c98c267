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

import math

import numpy as np
import scipy.optimize
import scipy.special
import scipy.stats
import torch
from torch import Tensor
from torch.nn.functional import softplus

from setfuncs.population import syncs_allowed
from ..caching import shared_cache

__all__ = ["EPSILON", "beta_concentrations", "beta_log_likelihood", "beta_nll", "beta_mean",
           "beta_quantiles", "marginal_beta", "marginal_head_bias"]

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
    in ``(0, 1)`` (checked, except inside :func:`setfuncs.population.sync_free`, where no value is read:
    a training sampler's weights lie in ``(0, 1)`` by construction)."""
    a, b = beta_concentrations(output)
    w = w.reshape(-1).to(output.dtype)
    if w.shape[0] != a.shape[0]:
        raise ValueError(f"need one weight per population: output has {a.shape[0]} rows, w has "
                         f"{w.shape[0]} values")
    if syncs_allowed() and bool(((w <= 0) | (w >= 1)).any()):     # inside sync_free (a graph, an ensemble): unread
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


@shared_cache(maxsize=4)
def marginal_beta(low: float = 0.05, high: float = 0.5) -> tuple[float, float]:
    r"""The Beta distribution closest to the targets' marginal, :math:`w \sim U[\text{low}, \text{high}]`:
    the maximum-likelihood :math:`(a, b)` in the limit of infinitely many targets, which solves

    .. math::
        \psi(a) - \psi(a + b) = \mathbb E[\ln w], \qquad \psi(b) - \psi(a + b) = \mathbb E[\ln(1 - w)],

    with the uniform's expectations in closed form,
    :math:`\mathbb E[\ln w] = \frac{[t \ln t - t]_{\text{low}}^{\text{high}}}{\text{high} - \text{low}}`.
    It is the best constant prediction under the training loss: a model that ignores its input can
    do no better than this Beta.
    """
    if not 0 < low < high < 1:
        raise ValueError(f"need 0 < low < high < 1, got {low}, {high}")
    antiderivative = lambda t: t * math.log(t) - t  # noqa: E731
    mean_log_w = (antiderivative(high) - antiderivative(low)) / (high - low)
    mean_log_1mw = (antiderivative(1 - low) - antiderivative(1 - high)) / (high - low)

    def equations(log_ab: np.ndarray) -> list[float]:
        a, b = np.exp(log_ab)
        both = scipy.special.digamma(a + b)
        return [scipy.special.digamma(a) - both - mean_log_w, scipy.special.digamma(b) - both - mean_log_1mw]

    solution, info, converged, message = scipy.optimize.fsolve(equations, np.zeros(2), full_output=True, xtol=1e-12)
    if converged != 1:
        raise RuntimeError(f"the marginal Beta fit did not converge: {message}")
    a, b = np.exp(solution)
    return float(a), float(b)


def marginal_head_bias(low: float = 0.05, high: float = 0.5) -> tuple[float, float]:
    r"""The raw outputs ``(u, v)`` that :func:`beta_concentrations` maps to :func:`marginal_beta`:
    :math:`\operatorname{softplus}^{-1}(c - \epsilon) = \ln(e^{c - \epsilon} - 1)`."""
    return tuple(float(math.log(math.expm1(c - EPSILON))) for c in marginal_beta(low, high))
