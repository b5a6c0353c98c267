"""Comparisons paired by seed (:mod:`setfuncs.experiments.paired`): the error rates are proven by
simulation at the seed counts the chapters use (3, 5 and 10), per claim and for a Holm-corrected
table; the power against a true effect of one standard deviation at 10 seeds is at least 80 %; the
exact test equals its definition, and the Monte Carlo test approaches it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from setfuncs.experiments.paired import (EXACT_LIMIT, detectable_effect, holm, paired_differences, sign_flip_test,
                                         smallest_p_value, t_interval)

LEVEL = 0.05
SIMULATIONS = 2000
#: Three standard errors of a rate of 5 % over the simulations: the Monte Carlo slack of a bound.
SLACK = 3 * np.sqrt(LEVEL * (1 - LEVEL) / SIMULATIONS)


def _brute_force(d: np.ndarray, alternative: str) -> float:
    means = [np.mean(np.array(signs) * d) for signs in itertools.product((1, -1), repeat=len(d))]
    observed = d.mean()
    if alternative == "greater":
        return float(np.mean([m >= observed - 1e-12 for m in means]))
    if alternative == "less":
        return float(np.mean([m <= observed + 1e-12 for m in means]))
    return float(np.mean([abs(m) >= abs(observed) - 1e-12 for m in means]))


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("n", [1, 3, 6])
def test_the_exact_test_is_its_definition(n: int, alternative: str) -> None:
    d = np.random.default_rng(n).normal(0.3, 1.0, n)
    assert sign_flip_test(d, alternative) == pytest.approx(_brute_force(d, alternative), abs=1e-12)


def test_the_monte_carlo_test_approaches_the_exact_one() -> None:
    n = EXACT_LIMIT + 1
    d = np.random.default_rng(0).normal(0.4, 1.0, n)
    signs = 1 - 2 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)      # every pattern, as bits
    exact = float(np.mean(signs @ d / n >= d.mean() - 1e-12))
    assert sign_flip_test(d, "greater", flips=200_000) == pytest.approx(exact, abs=0.005)


@pytest.mark.parametrize("n, smallest", [(3, 0.125), (5, 0.03125), (10, 2 ** -10)])
def test_few_seeds_cannot_decide(n: int, smallest: float) -> None:
    """Three seeds never give p < 0.125: the best the exact test can say, all differences positive."""
    assert smallest_p_value(n) == smallest
    assert sign_flip_test(np.arange(1.0, n + 1), "greater") == smallest
    assert smallest_p_value(n, "two-sided") == 2 * smallest


@pytest.mark.parametrize("n", [3, 5, 10])
@pytest.mark.parametrize("noise", ["normal", "skewed-symmetric", "heavy"])
def test_a_true_null_is_rejected_at_most_at_the_level(n: int, noise: str) -> None:
    """Exchangeable configurations within a seed: the differences are symmetric about 0 (normal,
    a symmetric mixture of skewed pieces, Cauchy)."""
    rng = np.random.default_rng(n)
    if noise == "normal":
        d = rng.normal(size=(SIMULATIONS, n))
    elif noise == "skewed-symmetric":
        d = rng.exponential(size=(SIMULATIONS, n)) ** 2 * rng.choice((-1, 1), size=(SIMULATIONS, n))
    else:
        d = rng.standard_cauchy(size=(SIMULATIONS, n))
    rejected = np.mean([sign_flip_test(row, "greater") <= LEVEL for row in d])
    assert rejected <= LEVEL + SLACK


@pytest.mark.parametrize("n", [3, 5, 10])
def test_a_holm_corrected_table_errs_at_most_at_the_level(n: int) -> None:
    """Eight claims under the global null, each paired with its own noise and sharing a common
    per-seed component (the claims of one table compare the same runs, so they are dependent):
    the chance that any is decided stays at most the level."""
    rng = np.random.default_rng(100 + n)
    claims = 8
    any_decided = 0
    for _ in range(SIMULATIONS // 4):
        shared = rng.normal(size=n)
        p = [sign_flip_test(shared * rng.choice((-1, 1)) + rng.normal(size=n), "greater") for _ in range(claims)]
        any_decided += bool((holm(p) <= LEVEL).any())
    assert any_decided / (SIMULATIONS // 4) <= LEVEL + 3 * np.sqrt(LEVEL * (1 - LEVEL) / (SIMULATIONS // 4))


def test_ten_seeds_detect_an_effect_of_one_standard_deviation() -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(1.0, 1.0, size=(SIMULATIONS, 10))
    power = np.mean([sign_flip_test(row, "greater") <= LEVEL for row in d])
    assert power >= 0.80
    assert detectable_effect(10) < 1.0


def test_the_machinery_decides_what_is_real() -> None:
    """Ten of ten seeds in the same direction, as recurrent equivariant layers on the circle: decided."""
    d = np.random.default_rng(3).uniform(0.5, 2.0, 10)
    assert sign_flip_test(d, "greater") == 2 ** -10 and sign_flip_test(d, "less") == 1.0


@pytest.mark.parametrize("n", [3, 5, 10])
def test_the_t_interval_covers_at_its_level(n: int) -> None:
    rng = np.random.default_rng(n)
    d = rng.normal(0.7, 2.0, size=(SIMULATIONS, n))
    covered = np.mean([low <= 0.7 <= high for _, low, high in (t_interval(row) for row in d)])
    assert abs(covered - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / SIMULATIONS)


def test_holm_is_its_definition() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5])
    order = np.argsort(p)
    expected = np.empty(5)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (5 - rank) * p[i])
        expected[i] = min(1.0, running)
    np.testing.assert_allclose(holm(p), expected)
    assert holm([]).size == 0


def test_the_detectable_effect_is_the_noncentral_t_power() -> None:
    for n in (5, 10, 20):
        delta = detectable_effect(n)
        critical = stats.t.ppf(0.95, n - 1)
        assert stats.nct.sf(critical, n - 1, delta * np.sqrt(n)) == pytest.approx(0.8, abs=1e-6)
    assert detectable_effect(3) == float("inf")       # the exact test cannot reach 5 % with three seeds


def test_differences_are_paired_by_seed() -> None:
    seeds, d = paired_differences({0: 1.0, 1: 2.0, 2: float("nan"), 4: 5.0}, {1: 0.5, 0: 0.0, 2: 1.0, 3: 1.0})
    assert seeds == [0, 1] and d.tolist() == [1.0, 1.5]


@pytest.mark.parametrize("call, match", [
    (lambda: sign_flip_test([]), "non-empty"), (lambda: sign_flip_test([1.0, np.nan]), "finite"),
    (lambda: sign_flip_test([1.0], "bigger"), "alternative"), (lambda: t_interval([1.0]), "at least two"),
    (lambda: holm([0.1, 1.5]), r"in \[0, 1\]"), (lambda: detectable_effect(1), "at least 2"),
    (lambda: smallest_p_value(0), "positive int"), (lambda: sign_flip_test(np.ones(20), flips=0), "flips must be"),
    (lambda: sign_flip_test([1.0], flips=-5), "flips must be"), (lambda: sign_flip_test([1.0], flips=2.5), "flips")])
def test_bad_input_is_refused_by_name(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()
