"""The mixture-weights model output (a Beta distribution) and the bootstrap KDE metric against EM."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
import torch

import setfuncs as sf
from setfuncs.experiments.mixture import (beta_concentrations, beta_log_likelihood, beta_mean,
                                          beta_nll, beta_quantiles, bootstrap_samples,
                                          em_estimates, estimator_curve, kde_log_density,
                                          log_score_ratio, model_estimates, sample_populations,
                                          scott_bandwidth)
from setfuncs.experiments.mixture import metric as metric_module
from setfuncs.experiments.mixture.metric import MIN_BANDWIDTH


def _outputs(rows: int = 200) -> torch.Tensor:
    return 3 * torch.randn(rows, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def test_beta_log_likelihood_matches_scipy() -> None:
    output = _outputs()
    w = torch.rand(200, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 0.98 + 0.01
    a, b = beta_concentrations(output)
    assert bool((a > 0).all()) and bool((b > 0).all())
    expected = scipy.stats.beta.logpdf(w.numpy(), a.numpy(), b.numpy())
    np.testing.assert_allclose(beta_log_likelihood(output, w).numpy(), expected, rtol=1e-9, atol=1e-9)
    assert beta_nll(output, w[:, None]).item() == pytest.approx(-expected.mean(), rel=1e-9)
    np.testing.assert_allclose(beta_mean(output).numpy(), scipy.stats.beta.mean(a.numpy(), b.numpy()), rtol=1e-12)


def test_beta_loss_has_gradients_and_is_minimised_at_the_truth() -> None:
    """For Beta(a, a * 3) fixed mean 0.25, the NLL of w = 0.25 falls as the concentration grows."""
    raws = torch.tensor([[0.5, 1.5], [2.0, 6.0], [5.0, 15.0]], dtype=torch.float64, requires_grad=True)
    nll = -beta_log_likelihood(raws, torch.full((3,), 0.25, dtype=torch.float64))
    assert nll[0] > nll[1] > nll[2]
    nll.sum().backward()
    assert bool(torch.isfinite(raws.grad).all()) and bool((raws.grad != 0).all())


def test_beta_quantiles_match_scipy_and_are_ordered() -> None:
    output = _outputs(20)
    q = beta_quantiles(output, [0.05, 0.25, 0.5, 0.75, 0.95])
    a, b = (c.numpy() for c in beta_concentrations(output))
    np.testing.assert_allclose(q[:, 2], scipy.stats.beta.median(a, b), rtol=1e-9)
    assert q.shape == (20, 5) and bool((np.diff(q, axis=1) >= 0).all())


def test_beta_bad_input() -> None:
    with pytest.raises(ValueError, match=r"shape \[B, 2\]"):
        beta_mean(torch.zeros(4, 3))
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        beta_log_likelihood(torch.zeros(2, 2), torch.tensor([0.5, 1.0]))
    with pytest.raises(ValueError, match="one weight per population"):
        beta_log_likelihood(torch.zeros(2, 2), torch.tensor([0.5]))
    with pytest.raises(ValueError, match="quantile levels"):
        beta_quantiles(torch.zeros(2, 2), [0.5, 1.5])


def test_kde_is_scipys_gaussian_kde() -> None:
    estimates = np.random.default_rng(0).normal(0.3, 0.05, size=100)
    for point in (0.1, 0.3, 0.42):
        assert kde_log_density(estimates, point) == pytest.approx(
            float(scipy.stats.gaussian_kde(estimates).logpdf(point)[0]), rel=1e-12)
    assert scott_bandwidth(estimates) == pytest.approx(
        float(np.sqrt(scipy.stats.gaussian_kde(estimates).covariance[0, 0])), rel=1e-12)


def test_kde_bandwidth_floor_for_degenerate_estimates() -> None:
    """Identical estimates (a collapsed model) would make gaussian_kde singular: the floor gives
    one Gaussian of width MIN_BANDWIDTH; just above the floor both formulas meet."""
    same = np.full(100, 0.2)
    assert kde_log_density(same, 0.25) == pytest.approx(
        float(scipy.stats.norm.logpdf(0.25, 0.2, MIN_BANDWIDTH)), rel=1e-12)
    assert math.isfinite(kde_log_density(same, 0.9))
    # a set whose Scott bandwidth is exactly at the floor
    spread = np.random.default_rng(1).normal(size=100)
    spread = 0.3 + spread / scott_bandwidth(spread) * MIN_BANDWIDTH
    below = 0.3 + (spread - 0.3) * (1 - 1e-9)
    assert kde_log_density(spread, 0.301) == pytest.approx(kde_log_density(below, 0.301), rel=1e-6)


def test_kde_refuses_non_finite_or_too_few_estimates() -> None:
    with pytest.raises(ValueError, match="NaN or infinite"):
        kde_log_density(np.array([0.1, np.nan, 0.2]), 0.1)
    with pytest.raises(ValueError, match="at least 2"):
        kde_log_density(np.array([0.1]), 0.1)


def _normal_set(mean: float, std: float, size: int = 2000) -> np.ndarray:
    """A deterministic 'sample' of N(mean, std^2): its quantiles at (i + 0.5) / size."""
    return mean + std * scipy.stats.norm.ppf((np.arange(size) + 0.5) / size)


def test_metric_known_answer_and_sign() -> None:
    """Model estimates centred on the truth, EM's off by d, both with spread s: the KDEs are about
    N(centre, s^2 + h^2), so the metric is about -d^2 / (2 (s^2 + h^2)) < 0 (EM is outperformed)."""
    w, s, d = 0.2, 0.03, 0.06
    model, em = _normal_set(w, s), _normal_set(w + d, s)
    variance = model.var(ddof=1) + scott_bandwidth(model) ** 2
    metric = log_score_ratio(model, em, w)
    assert metric < 0
    assert metric == pytest.approx(-d ** 2 / (2 * variance), rel=1e-3)
    assert log_score_ratio(em, model, w) == pytest.approx(-metric, rel=1e-12)      # swapped: positive
    assert log_score_ratio(model, model, w) == 0.0
    # a sharper model at the truth beats an equally centred but wider EM by log(width ratio)
    assert log_score_ratio(_normal_set(w, s), _normal_set(w, 2 * s), w) == pytest.approx(-math.log(2), rel=1e-3)


def test_bootstrap_samples_are_drawn_from_the_population() -> None:
    x = torch.randn(3, 10, 2, generator=torch.Generator().manual_seed(2))
    samples = bootstrap_samples(x, 25, bootstraps=7, seed=4)
    assert samples.shape == (3, 7, 25, 2)
    for p in range(3):
        members = (samples[p].reshape(-1, 1, 2) == x[p][None]).all(-1).any(-1)
        assert bool(members.all())
    assert torch.equal(samples, bootstrap_samples(x, 25, bootstraps=7, seed=4))
    assert not torch.equal(samples, bootstrap_samples(x, 25, bootstraps=7, seed=5))
    with pytest.raises(ValueError, match="positive int"):
        bootstrap_samples(x, 0)


def test_model_estimates_in_chunks_equal_one_pass(monkeypatch) -> None:
    torch.manual_seed(0)
    model = sf.DeepSet(2, 2, "mean/r-max", hidden=8, equivariant_layers=1, steps=2)
    samples = bootstrap_samples(sample_populations(2, 40).x, 30, bootstraps=5)
    whole = model_estimates(model, samples)
    monkeypatch.setattr(metric_module, "MAX_PARTICLES_PER_CHUNK", 70)     # chunks of 2 subsamples
    torch.testing.assert_close(model_estimates(model, samples), whole)
    with torch.no_grad():
        torch.testing.assert_close(whole[1], beta_mean(model(samples[1])).double())


def test_estimator_curve() -> None:
    torch.manual_seed(0)
    model = sf.DeepSet(2, 2, "mean/mean", hidden=8, equivariant_layers=1)
    population = sample_populations(1, 100, torch.Generator().manual_seed(3)).x[0]
    curve = estimator_curve(model, population, [10, 100, 500], bootstraps=40)
    assert list(curve["sizes"]) == [10, 100, 500]
    for who in ("model", "em"):
        c = curve[who]
        assert c["estimates"].shape == (3, 40)
        assert bool((c["q05"] <= c["q25"]).all() and (c["q25"] <= c["median"]).all()
                    and (c["median"] <= c["q75"]).all() and (c["q75"] <= c["q95"]).all())
    # EM's estimates concentrate as the bootstrap size grows
    em_width = curve["em"]["q95"] - curve["em"]["q05"]
    assert em_width[2] < em_width[0]
    np.testing.assert_allclose(curve["em"]["estimates"][1],
                               em_estimates(bootstrap_samples(population[None], 100, 40)[0]).numpy())
    with pytest.raises(ValueError, match=r"one population of shape \[M, 2\]"):
        estimator_curve(model, population[None], [10])
