"""The batched EM baseline of the mixture-weights experiment agrees with scikit-learn's
GaussianMixture and behaves on easy and degenerate populations."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from sklearn.mixture import GaussianMixture

from setfuncs.experiments.mixture import (em_smaller_weight, fit_gmm, initial_parameters,
                                          sample_populations)


def test_agrees_with_scikit_learn_from_the_same_start() -> None:
    """300 populations of 100, some of which take over 20 iterations: the smaller weight within
    1e-3 (measured: 1e-15), the same iteration counts and convergence flags."""
    x = sample_populations(300, 100, torch.Generator().manual_seed(0)).x.double()
    init = initial_parameters(x)
    ours = fit_gmm(x, init=init)
    weights, means, covariances = (t.numpy() for t in init)
    theirs, iterations, converged = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                       # ConvergenceWarning of hard populations
        for i in range(x.shape[0]):
            gmm = GaussianMixture(2, covariance_type="full", weights_init=weights[i], means_init=means[i],
                                  precisions_init=np.linalg.inv(covariances[i])).fit(x[i].numpy())
            theirs.append(gmm.weights_.min())
            iterations.append(gmm.n_iter_)
            converged.append(gmm.converged_)
    np.testing.assert_allclose(ours.smaller_weight.numpy(), theirs, atol=1e-3, rtol=0)
    assert np.abs(ours.smaller_weight.numpy() - theirs).max() < 1e-9
    assert (ours.iterations.numpy() == np.array(iterations)).mean() > 0.99
    assert (ours.converged.numpy() == np.array(converged)).all()
    assert max(iterations) > 20, "no slowly converging population: draw more"


def test_a_population_alone_gives_the_same_fit_as_in_a_batch() -> None:
    """Populations stop at different iterations; the frozen ones must not change."""
    x = sample_populations(64, 50, torch.Generator().manual_seed(1)).x
    batch = fit_gmm(x)
    assert batch.iterations.unique().numel() > 3
    for i in (0, 17, int(batch.iterations.argmax())):
        alone = fit_gmm(x[i:i + 1])
        torch.testing.assert_close(alone.weights[0], batch.weights[i], rtol=0, atol=1e-12)
        torch.testing.assert_close(alone.covariances[0], batch.covariances[i], rtol=0, atol=1e-12)
        assert alone.iterations[0] == batch.iterations[i]


def test_recovers_well_separated_clusters() -> None:
    g = torch.Generator().manual_seed(2)
    left = torch.randn(30, 2, generator=g, dtype=torch.float64) * 0.2 + torch.tensor([4.0, 1.0], dtype=torch.float64)
    right = torch.randn(70, 2, generator=g, dtype=torch.float64) * 0.5 - 3.0
    x = torch.cat([left, right])[torch.randperm(100, generator=g)][None]
    result = fit_gmm(x)
    assert result.smaller_weight.item() == pytest.approx(0.3, abs=1e-6)
    assert bool(result.converged.all())
    smaller = int(result.weights[0].argmin())
    torch.testing.assert_close(result.means[0, smaller], left.mean(0), rtol=0, atol=1e-6)


def test_initial_parameters_are_a_valid_mixture() -> None:
    x = sample_populations(200, 20, torch.Generator().manual_seed(3)).x
    weights, means, covariances = initial_parameters(x)
    torch.testing.assert_close(weights.sum(1), torch.ones(200, dtype=torch.float64))
    assert bool((weights > 0).all())
    assert bool((torch.linalg.eigvalsh(covariances) > 0).all())
    assert means.shape == (200, 2, 2)


def test_degenerate_populations_stay_finite() -> None:
    """All particles equal: one component takes everything, the other keeps sklearn's 10 eps."""
    x = torch.ones(3, 5, 2)
    x[1] = torch.tensor([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    result = fit_gmm(x)
    assert bool(torch.isfinite(result.weights).all()) and bool(torch.isfinite(result.covariances).all())
    assert result.smaller_weight[0].item() < 1e-12
    assert result.smaller_weight[1].item() == pytest.approx(0.4, abs=1e-9)
    assert em_smaller_weight(x).shape == (3,)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match=r"\[B, N, 2\]"):
        fit_gmm(torch.zeros(10, 2))
    with pytest.raises(ValueError, match="at least 2"):
        fit_gmm(torch.zeros(4, 1, 2))
    with pytest.raises(ValueError, match="NaN"):
        fit_gmm(torch.full((1, 4, 2), float("nan")))
    with pytest.raises(ValueError, match="init must be"):
        fit_gmm(torch.randn(2, 5, 2), init=initial_parameters(torch.randn(3, 5, 2)))
    with pytest.raises(ValueError, match="max_iter"):
        fit_gmm(torch.randn(2, 5, 2), max_iter=0)
