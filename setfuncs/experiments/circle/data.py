r"""Populations and targets of the minimal enclosing circle experiment (Section 4.1 of the paper).

A *population* is ``N = 20`` particles in 2-D drawn from a Gaussian mixture model (GMM) that is
itself drawn anew for every population. The paper says only "a Gaussian mixture model"; this
module fixes the mixture as follows (constants below):

* number of components ``K`` uniform in ``{1, 2, 3}`` (:data:`MAX_COMPONENTS`);
* component means ``mu_k ~ N(0, 1.5^2 I)`` (:data:`MEAN_STD`);
* isotropic component standard deviations ``sigma_k ~ U[0.2, 1.0]`` (:data:`STD_RANGE`);
* mixture weights ``w ~ Dirichlet(1, ..., 1)`` over the ``K`` components (drawn as normalised
  ``Exp(1)`` variables, which is exactly ``Dirichlet(1)``);
* each particle picks a component ``k ~ w`` and is ``x_n = mu_k + sigma_k eps``, ``eps ~ N(0, I)``.

Why: one to three clusters of different spread and weight give circles that are fixed by a few
outlying particles of possibly small clusters, so the centre of the minimal enclosing circle is
far from the sample mean (the paper's point), and the centre moves around the plane from
population to population. With these numbers the radius is about ``2.0 +- 0.9`` (mean +- std),
the centres spread with variance about ``1.6`` per coordinate, and predicting the sample mean as
the centre costs a squared centre distance of about ``0.43`` (20,000 populations, seed 0;
``scripts/probes/circle_scale.py``, output in ``results/probes/circle_scale.txt``): a
scale of order 1, like the paper's reported errors (whose absolute values depend on its unknown
mixture, so only ratios between its rows are comparable with ours).

The target of a population is ``y = (centre_x, centre_y, radius)`` of its minimal enclosing
circle, from :func:`~setfuncs.experiments.circle.batched.min_enclosing_circles`.

>>> import torch
>>> x, y, mask = circle_batch(4, generator=torch.Generator().manual_seed(0))
>>> x.shape, y.shape, mask
(torch.Size([4, 20, 2]), torch.Size([4, 3]), None)
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..caching import shared_cache
from .batched import min_enclosing_circles

__all__ = ["MAX_COMPONENTS", "MEAN_STD", "STD_RANGE", "POPULATION_SIZE", "MARGINAL_SEED", "mixture_description",
           "sample_populations", "circle_targets", "circle_batch", "test_set", "target_mean"]

#: ``K`` is uniform in ``{1, ..., MAX_COMPONENTS}``.
MAX_COMPONENTS = 3
#: Component means are ``N(0, MEAN_STD^2 I)``.
MEAN_STD = 1.5
#: Isotropic component standard deviations are uniform in this interval.
STD_RANGE = (0.2, 1.0)
#: The paper trains on populations of 20 particles.
POPULATION_SIZE = 20
#: Seed of the populations whose mean target starts every model's output (:func:`target_mean`).
MARGINAL_SEED = 7


def mixture_description() -> dict:
    """The mixture's parameters as a JSON-friendly dict (stored beside sweep results)."""
    return {"components": f"uniform in 1..{MAX_COMPONENTS}", "mean_std": MEAN_STD,
            "std_range": list(STD_RANGE), "weights": "Dirichlet(1)"}


def _check_sizes(batch: int, n: int) -> None:
    for name, value in (("batch", batch), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def sample_populations(batch: int, n: int = POPULATION_SIZE,
                       generator: torch.Generator | None = None) -> Tensor:
    """``batch`` populations of ``n`` particles, each from its own random GMM: ``[B, n, 2]`` float32."""
    _check_sizes(batch, n)
    g = generator
    k = torch.randint(1, MAX_COMPONENTS + 1, (batch, 1), generator=g)
    means = MEAN_STD * torch.randn(batch, MAX_COMPONENTS, 2, generator=g)
    low, high = STD_RANGE
    stds = low + (high - low) * torch.rand(batch, MAX_COMPONENTS, generator=g)
    weights = -torch.log1p(-torch.rand(batch, MAX_COMPONENTS, generator=g))     # Exp(1)
    weights = weights * (torch.arange(MAX_COMPONENTS) < k)                       # first K only
    component = torch.multinomial(weights, n, replacement=True, generator=g)    # [B, n]
    mu = torch.gather(means, 1, component[..., None].expand(-1, -1, 2))
    sigma = torch.gather(stds, 1, component)[..., None]
    return mu + sigma * torch.randn(batch, n, 2, generator=g)


def circle_targets(x: Tensor) -> Tensor:
    """``(centre_x, centre_y, radius)`` ``[B, 3]`` of the minimal enclosing circles of ``x`` ``[B, N, 2]``."""
    centers, radii = min_enclosing_circles(x)
    return torch.cat([centers, radii[:, None]], dim=1).to(x.dtype)


def circle_batch(batch: int, n: int = POPULATION_SIZE,
                 generator: torch.Generator | None = None) -> tuple[Tensor, Tensor, None]:
    """A training batch ``(x [B, n, 2], y [B, 3], None)`` for :func:`setfuncs.train.fit`."""
    x = sample_populations(batch, n, generator)
    return x, circle_targets(x), None


@shared_cache(maxsize=16)
def test_set(size: int, n: int = POPULATION_SIZE, seed: int = 0) -> tuple[Tensor, Tensor, None]:
    """A fixed test set of ``size`` populations of ``n`` particles, drawn with ``seed``.

    Cached per process (targets for ``n = 100`` take about 7 s per 1000 populations), so the
    returned tensors are shared: do not modify them.
    """
    _check_sizes(size, n)
    return circle_batch(size, n, torch.Generator().manual_seed(seed))


@shared_cache(maxsize=1)
def target_mean(populations: int = 10_000) -> tuple[float, float, float]:
    """The mean target ``(centre_x, centre_y, radius)`` over ``populations`` training-like populations
    of 20 particles (seed :data:`MARGINAL_SEED`): where every model's output starts
    (:func:`setfuncs.model.init_head`), the best constant prediction under squared error."""
    _, y, _ = circle_batch(populations, POPULATION_SIZE, torch.Generator().manual_seed(MARGINAL_SEED))
    return tuple(float(v) for v in y.double().mean(0))
