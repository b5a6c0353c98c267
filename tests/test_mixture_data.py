"""Mixture-weights experiment (Section 4.2): the populations, their true mixtures and the
distribution of the training population size."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
import torch

from setfuncs.experiments.mixture import (COMPONENT_STD, TRAIN_SIZES, mixture_batch,
                                          mixture_log_density, population_size_probabilities,
                                          sample_mixtures, sample_particles, sample_population_size,
                                          sample_populations, training_sampler)
from setfuncs.experiments.mixture.data import test_populations as fixed_test_populations


def test_batch_shapes_and_target() -> None:
    x, y, mask = mixture_batch(8, 30, torch.Generator().manual_seed(0))
    assert x.shape == (8, 30, 2) and x.dtype == torch.float32
    assert y.shape == (8, 1) and y.dtype == torch.float32 and mask is None
    populations = sample_populations(8, 30, torch.Generator().manual_seed(0))
    torch.testing.assert_close(y[:, 0], populations.smaller_weight.float())
    torch.testing.assert_close(x, populations.x)


def test_weights_lie_in_the_papers_range() -> None:
    weights, _ = sample_mixtures(20_000, torch.Generator().manual_seed(1))
    torch.testing.assert_close(weights.sum(1), torch.ones(20_000, dtype=torch.float64))
    smaller = weights.min(1).values.numpy()
    assert smaller.min() >= 0.05 and smaller.max() <= 0.5 and weights.max() <= 0.95
    # uniform on [0.05, 0.5] (a fixed seed: the p-value is a number, not a coin flip)
    assert scipy.stats.kstest(smaller, scipy.stats.uniform(0.05, 0.45).cdf).pvalue > 0.01
    # either component gets the smaller weight, each about half the time (4 sigma = 0.014)
    first_is_smaller = (weights[:, 0] < weights[:, 1]).double().mean().item()
    assert abs(first_is_smaller - 0.5) < 0.014


def test_means_span_a_diameter_of_the_unit_circle() -> None:
    _, means = sample_mixtures(20_000, torch.Generator().manual_seed(2))
    torch.testing.assert_close(means.norm(dim=2), torch.ones(20_000, 2, dtype=torch.float64))
    torch.testing.assert_close(means[:, 1], -means[:, 0])
    angles = torch.atan2(means[:, 0, 1], means[:, 0, 0]).numpy()
    assert scipy.stats.kstest(angles, scipy.stats.uniform(-math.pi, 2 * math.pi).cdf).pvalue > 0.01


def test_particles_follow_the_mixture() -> None:
    """Mean and covariance of 400,000 particles of one mixture: ``w1 mu1 + w2 mu2`` and
    ``sigma^2 I + w1 w2 (mu1 - mu2)(mu1 - mu2)^T``."""
    weights = torch.tensor([[0.2, 0.8]], dtype=torch.float64)
    means = torch.tensor([[[0.6, 0.8], [-0.6, -0.8]]], dtype=torch.float64)
    x = sample_particles(weights, means, 400_000, torch.Generator().manual_seed(3))[0].double()
    torch.testing.assert_close(x.mean(0), weights[0] @ means[0], atol=6e-3, rtol=0)
    d = means[0, 0] - means[0, 1]
    expected = COMPONENT_STD ** 2 * torch.eye(2, dtype=torch.float64) + 0.2 * 0.8 * torch.outer(d, d)
    torch.testing.assert_close(torch.cov(x.T), expected, atol=8e-3, rtol=0)


def test_components_overlap_as_documented() -> None:
    """One component alone puts ``Phi(-1/sigma)`` (7.7 %) of its particles past the bisector."""
    weights = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    means = torch.tensor([[[1.0, 0.0], [-1.0, 0.0]]], dtype=torch.float64)
    x = sample_particles(weights, means, 200_000, torch.Generator().manual_seed(4))[0]
    crossed = (x[:, 0] < 0).double().mean().item()
    assert crossed == pytest.approx(scipy.stats.norm.cdf(-1 / COMPONENT_STD), abs=3e-3)
    assert 0.05 < crossed < 0.12


def test_population_size_probabilities_are_proportional_to_n() -> None:
    n, p = population_size_probabilities()
    assert (int(n[0]), int(n[-1])) == TRAIN_SIZES
    assert p.sum().item() == pytest.approx(1.0)
    torch.testing.assert_close(p / n, torch.full_like(p, p[0].item() / n[0].item()))


def test_sampled_population_sizes_are_proportional_to_n() -> None:
    """Chi-square test of 20,000 draws in bins of 10 sizes, and their mean (sum n^2 / sum n)."""
    generator = torch.Generator().manual_seed(5)
    draws = np.array([sample_population_size(generator) for _ in range(20_000)])
    low, high = TRAIN_SIZES
    assert draws.min() >= low and draws.max() <= high
    sizes = np.arange(low, high + 1)
    edges = np.arange(low, high + 11, 10)
    expected = np.histogram(sizes, edges, weights=sizes / sizes.sum())[0] * draws.size
    observed = np.histogram(draws, edges)[0]
    assert scipy.stats.chisquare(observed, expected).pvalue > 0.01
    assert draws.mean() == pytest.approx((sizes ** 2).sum() / sizes.sum(), abs=0.5)
    # sizes 140..149 are drawn sum(140..149) / sum(20..29) = 5.9 times as often as 20..29
    assert observed[-2] / observed[0] > 4


def test_training_sampler_draws_a_new_size_every_step() -> None:
    sample = training_sampler(3, torch.Generator().manual_seed(6))
    batches = [sample() for _ in range(300)]
    sizes = [x.shape[1] for x, _, _ in batches]
    assert len(set(sizes)) > 50 and min(sizes) >= TRAIN_SIZES[0] and max(sizes) <= TRAIN_SIZES[1]
    assert all(x.shape == (3, x.shape[1], 2) and y.shape == (3, 1) and m is None for x, y, m in batches)
    assert np.mean(sizes) > 85                     # uniform sizes would average 85


def test_populations_are_seeded() -> None:
    a = sample_populations(4, 10, torch.Generator().manual_seed(1))
    b = sample_populations(4, 10, torch.Generator().manual_seed(1))
    c = sample_populations(4, 10, torch.Generator().manual_seed(2))
    assert all(torch.equal(u, v) for u, v in zip(a, b)) and not torch.equal(a.x, c.x)
    fixed = fixed_test_populations(16, 10, 3)
    assert torch.equal(fixed.x, sample_populations(16, 10, torch.Generator().manual_seed(3)).x)
    assert fixed_test_populations(16, 10, 3) is fixed                  # cached


def test_mixture_log_density_matches_scipy() -> None:
    populations = sample_populations(1, 5, torch.Generator().manual_seed(7))
    w, mu = populations.weights[0], populations.means[0]
    points = torch.randn(50, 2, dtype=torch.float64)
    expected = np.log(sum(float(w[k]) * scipy.stats.multivariate_normal(mu[k].numpy(), COMPONENT_STD ** 2).pdf(points.numpy())
                          for k in range(2)))
    np.testing.assert_allclose(mixture_log_density(points, w, mu).numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_sizes(bad) -> None:
    with pytest.raises(ValueError, match="positive int"):
        sample_populations(bad, 10)
    with pytest.raises(ValueError, match="positive int"):
        mixture_batch(2, bad)
    with pytest.raises(ValueError, match="positive int"):
        sample_mixtures(bad)


def test_bad_shapes_and_ranges() -> None:
    with pytest.raises(ValueError, match=r"weights \[B, 2\] and means \[B, 2, 2\]"):
        sample_particles(torch.ones(3, 2), torch.ones(3, 2), 5)
    with pytest.raises(ValueError, match="low <= high"):
        population_size_probabilities((50, 20))
    populations = sample_populations(2, 5)
    with pytest.raises(ValueError, match="index a batch first"):
        mixture_log_density(torch.zeros(3, 2), populations.weights, populations.means)
