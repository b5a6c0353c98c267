r"""Populations and targets of the mixture-weights experiment (Section 4.2 of the paper).

A *population* is ``N`` particles in 2-D from a two-component Gaussian mixture drawn anew for every
population:

.. math::
    w &\sim U[0.05, 0.5], \quad (w_1, w_2) = (w, 1 - w) \text{ or } (1 - w, w) \text{ (a fair coin)}\\
    \theta &\sim U[0, 2\pi), \quad \mu_1 = (\cos\theta, \sin\theta), \quad \mu_2 = -\mu_1\\
    x_n &\sim w_1\, \mathcal N(\mu_1, \sigma^2 I) + w_2\, \mathcal N(\mu_2, \sigma^2 I),
    \quad \sigma = 0.7

so both weights lie in ``[0.05, 0.95]`` (the paper's range), the two means span a diameter of the
unit circle at a uniformly random angle, and both components share one fixed isotropic variance.
The *target* is the smaller true weight ``w`` (not the fraction of particles drawn from it).

**Why** :math:`\sigma = 0.7` (:data:`COMPONENT_STD`): the paper asks for clusters that are "not
linearly separable". Measured by ``scripts/probes/mixture_sigma.py`` on 2,000 populations of 100
particles each (a linear program per population decides whether a line separates the two
components' particles; output in ``results/probes/mixture_sigma.txt``), the fraction of
linearly separable populations is 91.5 % at ``sigma = 0.4``, 47.7 % at 0.5, 15.0 % at 0.6, 3.9 %
at 0.7 and 1.7 % at 0.8. The best line (the perpendicular bisector of
the means, equal weights) misclassifies :math:`\Phi(-1/\sigma) \approx 7.7\%` of the particles.
Larger values make the baseline nearly useless: the mean absolute error of EM's smaller weight
(:mod:`~setfuncs.experiments.mixture.em`, 2,000 populations of 100) is 0.043 at ``sigma = 0.5``,
0.067 at 0.6, 0.092 at 0.7 and 0.116 at 0.8, where the constant guess 0.275 scores 0.112. At 0.7
the clusters overlap clearly, the mixture stays bimodal for equal weights (the means are
:math:`2.9\,\sigma` apart) and EM still beats a constant.

**Other spreads.** Every function here that draws particles, :func:`test_populations` and
:func:`mixture_log_density` take ``std`` (default :data:`COMPONENT_STD`). It scales the Gaussian
noise and nothing else: the generator's draws and their order do not depend on it, so a
population at another ``std`` has the same weights, means, component labels and standard-normal
noise as at 0.7, and the default streams are those of every committed run
(``tests/test_mixture_sigma.py`` checks their fingerprints). ``scripts/probes/mixture_sigma_models.py``
trains models at 0.5, 0.6 and 0.7 (:mod:`~setfuncs.experiments.mixture.sensitivity`).

**Population sizes.** Training draws a new ``N`` for every gradient step with
:math:`P(N = n) \propto n` on ``n = 20, ..., 150`` (:data:`TRAIN_SIZES`; mean 102, so training is
centred on the paper's test size of 100); a batch shares one ``N`` (``mask=None``).

>>> import torch
>>> x, y, mask = mixture_batch(4, 30, generator=torch.Generator().manual_seed(0))
>>> x.shape, y.shape, mask
(torch.Size([4, 30, 2]), torch.Size([4, 1]), None)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from ..caching import shared_cache

__all__ = ["SMALLER_WEIGHT_RANGE", "COMPONENT_STD", "TRAIN_SIZES", "TEST_POPULATION_SIZE",
           "Mixtures", "mixture_description", "sample_mixtures", "sample_labelled_particles", "sample_particles",
           "sample_populations", "mixture_batch", "population_size_probabilities",
           "sample_population_size", "training_sampler", "padded_training_sampler", "test_populations", "mixture_log_density"]

#: The smaller weight ``w`` is uniform in this interval; its partner is ``1 - w``.
SMALLER_WEIGHT_RANGE = (0.05, 0.5)
#: The standard deviation of both components, per coordinate (isotropic).
COMPONENT_STD = 0.7
#: Training population sizes, ``P(N = n)`` proportional to ``n`` on this range (inclusive).
TRAIN_SIZES = (20, 150)
#: The paper's population size (test populations, the violins' metric).
TEST_POPULATION_SIZE = 100


class Mixtures(NamedTuple):
    """A batch of populations ``x`` with their true mixtures ``weights`` and ``means``."""

    x: Tensor
    weights: Tensor
    means: Tensor

    @property
    def smaller_weight(self) -> Tensor:
        """The smaller true weight of each population (the target), ``[B]`` (float64)."""
        return self.weights.min(dim=1).values


Mixtures.x.__doc__ = "Particles ``[B, N, 2]`` (float32)."
Mixtures.weights.__doc__ = "True mixture weights ``[B, 2]`` (float64); rows sum to one."
Mixtures.means.__doc__ = "True component means ``[B, 2, 2]`` (float64); ``means[:, 1] == -means[:, 0]``."


def mixture_description() -> dict:
    """The mixture's parameters as a JSON-friendly dict (stored beside sweep results)."""
    return {"components": 2, "smaller_weight": f"uniform in {list(SMALLER_WEIGHT_RANGE)}",
            "means": "+-(cos t, sin t), t uniform in [0, 2 pi)", "component_std": COMPONENT_STD,
            "train_population_sizes": f"P(N = n) proportional to n for n in {TRAIN_SIZES[0]}..{TRAIN_SIZES[1]}",
            "test_population_size": TEST_POPULATION_SIZE}


def _check_positive(**values: object) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def sample_mixtures(batch: int, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """``batch`` random mixtures: weights ``[B, 2]`` and means ``[B, 2, 2]``, both float64."""
    _check_positive(batch=batch)
    low, high = SMALLER_WEIGHT_RANGE
    w = low + (high - low) * torch.rand(batch, generator=generator, dtype=torch.float64)
    swap = torch.rand(batch, generator=generator) < 0.5
    weights = torch.stack([torch.where(swap, 1 - w, w), torch.where(swap, w, 1 - w)], dim=1)
    theta = 2 * math.pi * torch.rand(batch, generator=generator, dtype=torch.float64)
    first = torch.stack([theta.cos(), theta.sin()], dim=1)
    return weights, torch.stack([first, -first], dim=1)


def sample_labelled_particles(weights: Tensor, means: Tensor, n: int, generator: torch.Generator | None = None,
                              std: float = COMPONENT_STD) -> tuple[Tensor, Tensor]:
    """``n`` particles from each mixture ``(weights [B, 2], means [B, 2, 2])`` with component standard
    deviation ``std``: the particles ``[B, n, 2]`` float32 and their components ``[B, n]`` (bool: the
    second component)."""
    _check_positive(n=n)
    if not std > 0:
        raise ValueError(f"std must be positive, got {std!r}")
    if weights.dim() != 2 or weights.shape[1] != 2 or means.shape != (weights.shape[0], 2, 2):
        raise ValueError(f"need weights [B, 2] and means [B, 2, 2], got {tuple(weights.shape)} and "
                         f"{tuple(means.shape)}")
    batch = weights.shape[0]
    second = torch.rand(batch, n, generator=generator, dtype=torch.float64) >= weights[:, :1]
    mu = torch.where(second[..., None], means[:, None, 1], means[:, None, 0])
    noise = torch.randn(batch, n, 2, generator=generator, dtype=torch.float64)
    return (mu + std * noise).float(), second


def sample_particles(weights: Tensor, means: Tensor, n: int, generator: torch.Generator | None = None,
                     std: float = COMPONENT_STD) -> Tensor:
    """``n`` particles from each mixture ``(weights [B, 2], means [B, 2, 2])`` with component standard
    deviation ``std``: ``[B, n, 2]`` float32."""
    return sample_labelled_particles(weights, means, n, generator, std)[0]


def sample_populations(batch: int, n: int, generator: torch.Generator | None = None,
                       std: float = COMPONENT_STD) -> Mixtures:
    """``batch`` populations of ``n`` particles, each from its own random mixture with component
    standard deviation ``std``."""
    _check_positive(batch=batch, n=n)
    weights, means = sample_mixtures(batch, generator)
    return Mixtures(sample_particles(weights, means, n, generator, std), weights, means)


def mixture_batch(batch: int, n: int, generator: torch.Generator | None = None,
                  std: float = COMPONENT_STD) -> tuple[Tensor, Tensor, None]:
    """A training batch ``(x [B, n, 2], y [B, 1], None)`` for :func:`setfuncs.train.fit`; ``y`` is the
    smaller true weight (float32), ``std`` the components' standard deviation."""
    populations = sample_populations(batch, n, generator, std)
    return populations.x, populations.smaller_weight[:, None].float(), None


def population_size_probabilities(sizes: tuple[int, int] = TRAIN_SIZES) -> tuple[Tensor, Tensor]:
    """The training sizes ``n = low .. high`` and :math:`P(N = n) = n / \\sum_m m` (float64)."""
    low, high = sizes
    _check_positive(low=low, high=high)
    if high < low:
        raise ValueError(f"the size range must have low <= high, got {sizes}")
    n = torch.arange(low, high + 1)
    return n, n.double() / n.sum()


def sample_population_size(generator: torch.Generator | None = None,
                           sizes: tuple[int, int] = TRAIN_SIZES) -> int:
    """One training population size, :math:`P(N = n) \\propto n` on ``sizes`` (inclusive)."""
    n, p = population_size_probabilities(sizes)
    return int(n[torch.multinomial(p, 1, generator=generator)])


def training_sampler(batch: int, generator: torch.Generator | None = None,
                     sizes: tuple[int, int] = TRAIN_SIZES, std: float = COMPONENT_STD):
    """A sampler for :func:`setfuncs.train.fit`: every call draws ``N`` (:math:`\\propto n`), then a
    :func:`mixture_batch` of ``batch`` populations of ``N`` particles (component standard deviation
    ``std``)."""
    _check_positive(batch=batch)
    n, p = population_size_probabilities(sizes)

    def sample() -> tuple[Tensor, Tensor, None]:
        return mixture_batch(batch, int(n[torch.multinomial(p, 1, generator=generator)]), generator, std)

    return sample


def padded_training_sampler(batch: int, generator: torch.Generator | None = None,
                            sizes: tuple[int, int] = TRAIN_SIZES, std: float = COMPONENT_STD):
    r"""The batches of :func:`training_sampler` (the same draws from ``generator``), each padded to
    the largest size ``sizes[1]`` with zeros and returned with their mask (True = a real particle):
    ``(x [B, N_max, 2], y [B, 1], mask [B, N_max])``.

    Every step then has the same shape, so the step can be one CUDA graph and the seeds of a
    configuration one ensemble (:func:`setfuncs.ensemble.fit_ensemble`); the set functions ignore the
    padding, so the loss and its gradients are those of the unpadded batch
    (``tests/test_mixture_experiment.py``).
    """
    sample, largest = training_sampler(batch, generator, sizes, std), sizes[1]

    def padded() -> tuple[Tensor, Tensor, Tensor]:
        x, y, _ = sample()
        b, n, d = x.shape
        mask = torch.zeros(b, largest, dtype=torch.bool)
        mask[:, :n] = True
        return torch.cat([x, x.new_zeros(b, largest - n, d)], dim=1), y, mask

    return padded


@shared_cache(maxsize=16)
def test_populations(count: int, n: int = TEST_POPULATION_SIZE, seed: int = 0,
                     std: float = COMPONENT_STD) -> Mixtures:
    """A fixed test set of ``count`` populations of ``n`` particles, drawn with ``seed``, with component
    standard deviation ``std`` (the same mixtures and noise at every ``std``, see the module).

    Cached per process, so the returned tensors are shared: do not modify them.
    """
    _check_positive(count=count, n=n)
    return sample_populations(count, n, torch.Generator().manual_seed(seed), std)


def mixture_log_density(points: Tensor, weights: Tensor, means: Tensor, std: float = COMPONENT_STD) -> Tensor:
    r"""Log density of one true mixture at ``points [..., 2]`` (for contour plots).

    .. math:: \log p(x) = \log \sum_k w_k\, \mathcal N(x; \mu_k, \sigma^2 I), \quad \sigma = \text{std}

    ``weights`` ``[2]`` and ``means`` ``[2, 2]`` of one population, e.g. ``populations.weights[i]``.
    """
    if weights.shape != (2,) or means.shape != (2, 2):
        raise ValueError(f"need the weights [2] and means [2, 2] of one population, got "
                         f"{tuple(weights.shape)} and {tuple(means.shape)}; index a batch first")
    if not std > 0:
        raise ValueError(f"std must be positive, got {std!r}")
    points = points.to(torch.float64)
    squared = ((points[..., None, :] - means.to(torch.float64)) ** 2).sum(-1)      # [..., 2]
    log_normal = -squared / (2 * std ** 2) - math.log(2 * math.pi * std ** 2)
    return torch.logsumexp(log_normal + weights.to(torch.float64).log(), dim=-1)
