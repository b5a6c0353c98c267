r"""Expectation maximisation for two-component 2-D Gaussian mixtures, batched over populations.

The baseline of the paper's Section 4.2. :func:`fit_gmm` runs the algorithm of scikit-learn's
``GaussianMixture(n_components=2, covariance_type="full")`` on a whole batch ``x: [B, N, 2]`` at
once (float64 torch), with the same defaults (``tol=1e-3``, ``reg_covar=1e-6``, ``max_iter=100``)
and the same update order, so given the same initial parameters both give the same estimates up to
rounding (the tests check 1,000 populations). With responsibilities :math:`r_{nk}`:

.. math::
    \text{E-step:}\quad \log r_{nk} &= \log w_k + \log\mathcal N(x_n; \mu_k, \Sigma_k)
        - \log\textstyle\sum_j w_j\, \mathcal N(x_n; \mu_j, \Sigma_j)\\
    \text{M-step:}\quad n_k &= \textstyle\sum_n r_{nk} + 10\,\varepsilon_{\text{float64}}, \quad
        w_k = n_k / \textstyle\sum_j n_j, \quad \mu_k = \frac{1}{n_k}\sum_n r_{nk} x_n,\\
    \Sigma_k &= \textstyle\frac{1}{n_k}\sum_n r_{nk} (x_n - \mu_k)(x_n - \mu_k)^\top
        + \text{reg\_covar}\, I.

As in scikit-learn, each iteration is one E-step then one M-step; its *lower bound* is the mean
log-likelihood :math:`\frac1N\sum_n \log\sum_j w_j \mathcal N(x_n; \mu_j, \Sigma_j)` of the
parameters *before* the M-step, and a population stops (its parameters frozen) once the lower
bound changes by less than ``tol``. The 2 x 2 inverses and determinants are written out.

**Initialisation** (:func:`initial_parameters`, deterministic): 2-means clustering seeded by
farthest points (the particle farthest from the population mean, then the particle farthest from
that one), Lloyd iterations until no label changes (at most 30), then one M-step on the hard
labels, exactly as scikit-learn initialises from its k-means labels (``weights = n_k / N``).
Pass the same parameters to scikit-learn as ``weights_init``, ``means_init`` and
``precisions_init`` for an identical run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["TOL", "REG_COVAR", "MAX_ITER", "EMResult", "initial_parameters", "fit_gmm",
           "em_smaller_weight"]

#: Stop once the mean log-likelihood changes by less than this (scikit-learn's default).
TOL = 1e-3
#: Added to the diagonal of every covariance (scikit-learn's default).
REG_COVAR = 1e-6
#: EM iterations at most (scikit-learn's default).
MAX_ITER = 100
#: Lloyd iterations of the 2-means initialisation at most.
KMEANS_ITER = 30
_EPS = torch.finfo(torch.float64).eps


@dataclass(frozen=True)
class EMResult:
    """The fitted mixtures of a batch.

    Attributes:
        weights: ``[B, 2]``; means: ``[B, 2, 2]``; covariances: ``[B, 2, 2, 2]`` (float64).
        lower_bound: ``[B]`` mean log-likelihood at the last iteration (scikit-learn's
            ``lower_bound_``); iterations: ``[B]`` iterations run (``n_iter_``); converged: ``[B]``.
    """

    weights: Tensor
    means: Tensor
    covariances: Tensor
    lower_bound: Tensor
    iterations: Tensor
    converged: Tensor

    @property
    def smaller_weight(self) -> Tensor:
        """The smaller estimated weight per population, ``[B]``."""
        return self.weights.min(dim=1).values


def _check_x(x: Tensor) -> Tensor:
    if not isinstance(x, Tensor) or x.dim() != 3 or x.shape[2] != 2:
        shape = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"x must be a batch of 2-D populations of shape [B, N, 2], got {shape}; "
                         "add a batch axis to one population with x[None]")
    if x.shape[0] < 1 or x.shape[1] < 2:
        raise ValueError(f"EM for two components needs at least one population of at least 2 "
                         f"particles, got shape {tuple(x.shape)}")
    x = x.detach().to(torch.float64)
    if not bool(torch.isfinite(x).all()):
        raise ValueError("x holds NaN or infinite particles; EM needs finite coordinates")
    return x


def _m_step(x: Tensor, resp: Tensor, reg_covar: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(n_k [B, 2], means [B, 2, 2], covariances [B, 2, 2, 2])`` from responsibilities ``[B, N, 2]``."""
    nk = resp.sum(dim=1) + 10 * _EPS
    means = torch.einsum("bnk,bnd->bkd", resp, x) / nk[..., None]
    diff = x[:, None] - means[:, :, None]                                  # [B, 2, N, 2]
    covariances = torch.einsum("bkn,bkni,bknj->bkij", resp.transpose(1, 2), diff, diff) / nk[..., None, None]
    covariances = covariances + reg_covar * torch.eye(2, dtype=x.dtype)
    return nk, means, covariances


def _log_gaussian(x: Tensor, means: Tensor, covariances: Tensor) -> Tensor:
    """``log N(x_n; mu_k, Sigma_k)``, ``[B, N, 2]``, with the 2 x 2 inverse written out."""
    s00, s01, s11 = covariances[..., 0, 0], covariances[..., 0, 1], covariances[..., 1, 1]   # [B, 2]
    det = s00 * s11 - s01 * s01
    diff = x[:, :, None] - means[:, None]                                  # [B, N, 2, 2]
    dx, dy = diff[..., 0], diff[..., 1]
    mahalanobis = (s11[:, None] * dx * dx - 2 * s01[:, None] * dx * dy + s00[:, None] * dy * dy) / det[:, None]
    return -math.log(2 * math.pi) - 0.5 * det.log()[:, None] - 0.5 * mahalanobis


def _e_step(x: Tensor, weights: Tensor, means: Tensor, covariances: Tensor) -> tuple[Tensor, Tensor]:
    """``(lower bound [B], log responsibilities [B, N, 2])``."""
    log_prob = _log_gaussian(x, means, covariances) + weights.log()[:, None]
    log_norm = torch.logsumexp(log_prob, dim=2)
    return log_norm.mean(dim=1), log_prob - log_norm[..., None]


def initial_parameters(x: Tensor, reg_covar: float = REG_COVAR) -> tuple[Tensor, Tensor, Tensor]:
    """Deterministic farthest-point 2-means initialisation: ``(weights [B, 2], means [B, 2, 2],
    covariances [B, 2, 2, 2])``, float64 (see the module docstring)."""
    x = _check_x(x)
    batch = torch.arange(x.shape[0])
    first = x[batch, ((x - x.mean(dim=1, keepdim=True)) ** 2).sum(-1).argmax(dim=1)]
    second = x[batch, ((x - first[:, None]) ** 2).sum(-1).argmax(dim=1)]
    centers = torch.stack([first, second], dim=1)                          # [B, 2, 2]
    labels = torch.zeros(x.shape[:2], dtype=torch.bool)
    active, xa, ca = batch, x, centers                                     # populations still moving
    for iteration in range(KMEANS_ITER):
        distances = ((xa[:, :, None] - ca[:, None]) ** 2).sum(-1)           # [b, N, 2]
        new_labels = distances[..., 1] < distances[..., 0]                  # ties go to component 0
        moving = (new_labels != labels[active]).any(dim=1) | (iteration == 0)
        labels[active] = new_labels
        active, xa, ca, new_labels = active[moving], xa[moving], ca[moving], new_labels[moving]
        if active.numel() == 0:
            break
        resp = torch.stack([~new_labels, new_labels], dim=2).to(x.dtype)
        counts = resp.sum(dim=1)                                           # [b, 2]
        sums = torch.einsum("bnk,bnd->bkd", resp, xa)
        ca = torch.where(counts[..., None] > 0, sums / counts.clamp(min=1)[..., None], ca)
    resp = torch.stack([~labels, labels], dim=2).to(x.dtype)
    nk, means, covariances = _m_step(x, resp, reg_covar)
    return nk / x.shape[1], means, covariances


def fit_gmm(x: Tensor, tol: float = TOL, reg_covar: float = REG_COVAR, max_iter: int = MAX_ITER,
            init: tuple[Tensor, Tensor, Tensor] | None = None) -> EMResult:
    """EM for a two-component full-covariance Gaussian mixture on every population of ``x [B, N, 2]``.

    Args:
        x: populations (any float dtype; computed in float64).
        tol, reg_covar, max_iter: as scikit-learn's ``GaussianMixture``.
        init: ``(weights, means, covariances)`` to start from; None: :func:`initial_parameters`.
    """
    x = _check_x(x)
    if not (tol > 0 and reg_covar >= 0) or isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"need tol > 0, reg_covar >= 0 and a positive int max_iter, got {tol}, "
                         f"{reg_covar}, {max_iter!r}")
    weights, means, covariances = initial_parameters(x, reg_covar) if init is None else (
        t.detach().to(torch.float64).clone() for t in init)
    size = x.shape[0]
    if weights.shape != (size, 2) or means.shape != (size, 2, 2) or covariances.shape != (size, 2, 2, 2):
        raise ValueError(f"init must be weights [B, 2], means [B, 2, 2] and covariances [B, 2, 2, 2] "
                         f"for B = {size}, got {tuple(weights.shape)}, {tuple(means.shape)}, "
                         f"{tuple(covariances.shape)}")
    lower_bound = torch.full((size,), -math.inf, dtype=torch.float64)
    iterations = torch.zeros(size, dtype=torch.long)
    converged = torch.zeros(size, dtype=torch.bool)
    active = torch.arange(size)                                           # populations still iterating
    xa, wa, ma, ca, la = x, weights, means, covariances, lower_bound
    for iteration in range(1, max_iter + 1):
        bound, log_resp = _e_step(xa, wa, ma, ca)
        nk, ma, ca = _m_step(xa, log_resp.exp(), reg_covar)
        wa = nk / nk.sum(dim=1, keepdim=True)
        done = (bound - la).abs() < tol
        la = bound
        weights[active], means[active], covariances[active] = wa, ma, ca
        lower_bound[active], iterations[active], converged[active] = la, iteration, done
        if bool(done.any()):
            keep = ~done
            active, xa, wa, ma, ca, la = active[keep], xa[keep], wa[keep], ma[keep], ca[keep], la[keep]
            if active.numel() == 0:
                break
    return EMResult(weights, means, covariances, lower_bound, iterations, converged)


def em_smaller_weight(x: Tensor, **kwargs) -> Tensor:
    """The smaller EM weight of every population of ``x [B, N, 2]``, ``[B]`` float64 (:func:`fit_gmm`)."""
    return fit_gmm(x, **kwargs).smaller_weight
