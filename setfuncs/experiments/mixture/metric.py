r"""The paper's robustness metric: bootstrap estimates of the smaller weight, scored by a KDE.

For a test population with smaller true weight :math:`w` and a population size ``n``:

1. draw ``K = 100`` bootstrap subsamples of ``n`` particles *with replacement* from the population
   (:func:`bootstrap_samples`; for ``n`` above the population's size the subsamples repeat
   particles, so their estimates spread like ``1/sqrt(n)`` around the estimate from the whole
   population);
2. estimate the smaller weight of every subsample with the model (the mean :math:`a/(a+b)` of its
   Beta distribution, :func:`~setfuncs.experiments.mixture.loss.beta_mean`) and with EM
   (:func:`~setfuncs.experiments.mixture.em.em_smaller_weight`), on the *same* subsamples;
3. fit a 1-D Gaussian kernel density estimate to each set of ``K`` estimates
   (``scipy.stats.gaussian_kde``, Scott's bandwidth) and score the true weight:

.. math::
    \text{metric} = \log \hat p_{\text{EM}}(w) - \log \hat p_{\text{model}}(w).

**Sign**: negative when the model's KDE gives the true weight the higher density, i.e. EM is
outperformed (the paper: "negative sign indicates EM is outperformed; the more negative, the
better"); ``-log 2`` means the model's density at the truth is twice EM's.

**Degenerate estimate sets** (:data:`MIN_BANDWIDTH`). Scott's bandwidth is
:math:`h = \hat s\, K^{-1/5}` (:math:`\hat s`: the sample standard deviation). When every estimate
is the same, :math:`h = 0` and ``gaussian_kde`` fails (singular covariance); when they are nearly
the same, :math:`h` is tiny and :math:`\log \hat p(w) \approx -(w - e)^2 / 2h^2` explodes for any
estimate ``e`` off the truth, so one collapsed run would dominate every average. The rule: the
bandwidth is :math:`\max(h, h_{\min})` with :math:`h_{\min} = 10^{-3}`, the same for model and EM.
Where :math:`h \ge h_{\min}` this is exactly ``gaussian_kde``; below, the same Gaussian-kernel
formula with bandwidth :math:`h_{\min}`, so the log density is bounded below by about
:math:`-(0.95 / h_{\min})^2 / 2 \approx -4.5 \times 10^5` and never NaN. The floor is far below
the spread of real estimates: on the sweep's 16 test populations EM's Scott bandwidths are at
least 0.021 at ``n = 100`` and 0.0083 at ``n = 500`` (median 0.031 and 0.013). Non-finite
estimates raise a ``ValueError``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import scipy.stats
import torch
from scipy.special import logsumexp
from torch import Tensor, nn

from ..peaks import finite_metric
from ..results import sorted_runs
from ..schema import finished_runs
from .em import em_smaller_weight
from .loss import beta_mean

__all__ = ["SUMMARIES", "metric_by_run", "BOOTSTRAPS", "MIN_BANDWIDTH", "MAX_PARTICLES_PER_CHUNK", "bootstrap_samples", "model_estimates", "em_estimates",
           "scott_bandwidth", "kde_log_density", "log_score_ratio", "estimator_curve"]

#: Bootstrap subsamples per population and size (100 estimates each, as in the paper).
BOOTSTRAPS = 100
#: The smallest KDE bandwidth (in units of the weight), see the module docstring.
MIN_BANDWIDTH = 1e-3
#: The most particles one forward pass of the model takes (larger sets go in chunks).
MAX_PARTICLES_PER_CHUNK = 200_000


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def bootstrap_samples(x: Tensor, n: int, bootstraps: int = BOOTSTRAPS, seed: int = 0) -> Tensor:
    """``bootstraps`` subsamples of ``n`` particles drawn with replacement from every population of
    ``x [P, M, 2]``: ``[P, bootstraps, n, 2]``, reproducible from ``(seed, n)``."""
    if not isinstance(x, Tensor) or x.dim() != 3:
        raise ValueError(f"x must be populations of shape [P, M, D], got "
                         f"{tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__}")
    _check_count("n", n)
    _check_count("bootstraps", bootstraps)
    state = np.random.SeedSequence([seed, n]).generate_state(1)[0]
    generator = torch.Generator().manual_seed(int(state))
    index = torch.randint(x.shape[1], (x.shape[0], bootstraps, n), generator=generator)
    return torch.gather(x[:, None].expand(-1, bootstraps, -1, -1), 2,
                        index[..., None].expand(-1, -1, -1, x.shape[2]))


@torch.no_grad()
def model_estimates(model: nn.Module, samples: Tensor) -> Tensor:
    """The model's point estimates (Beta means) of ``samples [..., n, 2]``: ``[...]`` float64.

    Runs in eval mode on the model's device, in chunks of at most :data:`MAX_PARTICLES_PER_CHUNK`
    particles; the estimates are returned on the CPU.
    """
    shape, n = samples.shape[:-2], samples.shape[-2]
    flat = samples.reshape(-1, n, samples.shape[-1]).float()
    chunk = max(1, MAX_PARTICLES_PER_CHUNK // n)
    device = next(model.parameters()).device
    model.eval()
    means = [beta_mean(model(flat[i:i + chunk].to(device))).cpu() for i in range(0, flat.shape[0], chunk)]
    return torch.cat(means).double().reshape(shape)


def em_estimates(samples: Tensor) -> Tensor:
    """EM's smaller weights of ``samples [..., n, 2]``: ``[...]`` float64."""
    shape, n = samples.shape[:-2], samples.shape[-2]
    return em_smaller_weight(samples.reshape(-1, n, samples.shape[-1])).reshape(shape)


def _as_estimates(estimates: np.ndarray | Tensor | Sequence[float]) -> np.ndarray:
    values = np.asarray(estimates.detach().cpu() if isinstance(estimates, Tensor) else estimates,
                        dtype=np.float64)
    if values.ndim != 1 or values.size < 2:
        raise ValueError(f"a KDE needs a 1-D set of at least 2 estimates, got shape {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError(f"{int((~np.isfinite(values)).sum())} of {values.size} estimates are NaN or "
                         "infinite; a diverged model or an EM failure must be fixed, not scored")
    return values


def scott_bandwidth(estimates: np.ndarray | Tensor | Sequence[float]) -> float:
    """Scott's rule as ``scipy.stats.gaussian_kde`` uses it in 1-D: :math:`\\hat s\\, K^{-1/5}`."""
    values = _as_estimates(estimates)
    return float(values.std(ddof=1) * values.size ** (-1 / 5))


def kde_log_density(estimates: np.ndarray | Tensor | Sequence[float], point: float,
                    min_bandwidth: float = MIN_BANDWIDTH) -> float:
    """:math:`\\log \\hat p(\\text{point})` under a Gaussian KDE of ``estimates`` with Scott's
    bandwidth floored at ``min_bandwidth`` (``scipy.stats.gaussian_kde`` where the floor is not hit)."""
    values = _as_estimates(estimates)
    if not min_bandwidth > 0:
        raise ValueError(f"min_bandwidth must be positive, got {min_bandwidth}")
    if scott_bandwidth(values) >= min_bandwidth:
        return float(scipy.stats.gaussian_kde(values).logpdf(point)[0])
    log_kernels = scipy.stats.norm.logpdf(point, loc=values, scale=min_bandwidth)
    return float(logsumexp(log_kernels) - math.log(values.size))


def log_score_ratio(model: np.ndarray | Tensor | Sequence[float], em: np.ndarray | Tensor | Sequence[float],
                    true_weight: float, min_bandwidth: float = MIN_BANDWIDTH) -> float:
    """The metric :math:`\\log \\hat p_{\\text{EM}}(w) - \\log \\hat p_{\\text{model}}(w)` of one
    population and size (negative: EM is outperformed)."""
    return (kde_log_density(em, true_weight, min_bandwidth)
            - kde_log_density(model, true_weight, min_bandwidth))


def _summary(estimates: np.ndarray) -> dict[str, np.ndarray]:
    q05, q25, median, q75, q95 = np.quantile(estimates, [0.05, 0.25, 0.5, 0.75, 0.95], axis=1)
    return {"median": median, "q05": q05, "q25": q25, "q75": q75, "q95": q95, "estimates": estimates}


def estimator_curve(model: nn.Module, population: Tensor, sizes: Sequence[int],
                    bootstraps: int = BOOTSTRAPS, seed: int = 0) -> dict:
    """How the model's and EM's estimates of one population develop with the population size
    (the paper's Figure 4a).

    For every ``n`` in ``sizes``: ``bootstraps`` subsamples of ``n`` particles (with replacement)
    of ``population [M, 2]``, estimated by the model (Beta mean) and by EM.

    Returns ``{"sizes": [S], "model": {...}, "em": {...}}`` where each inner dict holds arrays
    ``median, q05, q25, q75, q95`` (``[S]``; the 50 % interval is ``q25..q75``, the 90 % interval
    ``q05..q95``) and ``estimates`` (``[S, bootstraps]``).
    """
    if not isinstance(population, Tensor) or population.dim() != 2:
        raise ValueError(f"population must be one population of shape [M, 2], got "
                         f"{tuple(population.shape) if isinstance(population, Tensor) else type(population).__name__}"
                         "; pick one with populations.x[i]")
    sizes = [int(n) for n in sizes]
    if not sizes:
        raise ValueError("sizes must name at least one population size")
    ours, theirs = [], []
    for n in sizes:
        samples = bootstrap_samples(population[None], n, bootstraps, seed)[0]
        ours.append(model_estimates(model, samples).numpy())
        theirs.append(em_estimates(samples).numpy())
    return {"sizes": np.array(sizes), "model": _summary(np.stack(ours)), "em": _summary(np.stack(theirs))}


#: How a run's metric summarises its test populations.
SUMMARIES = ("median", "mean")


def metric_by_run(results: dict, summary: str = "median") -> dict[tuple[str, int], float]:
    """``{(spec, seed): metric}`` of every finished run, by configuration and seed (+inf for a run that
    did not train or whose metric is not finite): the file's ``metric`` (the median over test
    populations at n = 100) or, with ``summary="mean"``, the mean of ``metric_per_population["100"]``."""
    if summary not in SUMMARIES:
        raise ValueError(f"summary must be one of {SUMMARIES}, got {summary!r}")
    out = {}
    for run in sorted_runs(finished_runs(results)):
        value = finite_metric(run, "metric")
        if value is not None and summary == "mean":
            value = float(np.mean(run["metric_per_population"]["100"]))
            value = value if np.isfinite(value) else None
        out[(run["spec"], run["seed"])] = np.inf if value is None else value
    return out
