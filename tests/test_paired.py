"""Comparisons paired by seed (:mod:`setfuncs.experiments.paired`): the error rates are proven by
simulation at the seed counts the chapters use (3, 5 and 10), per claim and for a Holm-corrected
table; the power against a true effect of one standard deviation at 10 seeds is at least 80 %; the
exact test equals its definition, and the Monte Carlo test approaches it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from setfuncs.experiments.paired import (EXACT_LIMIT, detectable_effect, holm, median_interval, paired_differences,
                                         sign_flip_test, sign_test, smallest_p_value, t_interval)

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


@pytest.mark.parametrize("n, alpha", [(6, 0.04), (10, 0.04), (10, 0.0033), (9, 0.0033)])
@pytest.mark.parametrize("test", ["sign-flip", "sign"])
def test_the_detectable_effect_gives_the_test_its_power(n: int, alpha: float, test: str) -> None:
    """At the detectable effect the test itself, run on normal differences, rejects in 80 % of sets of
    seeds (within Monte Carlo error): the sign-flip test's, not the t test's, which needs less."""
    delta = detectable_effect(n, alpha, 0.8, test)
    rng = np.random.default_rng(n)
    one_sided = sign_flip_test if test == "sign-flip" else sign_test
    trials = 1500
    power = np.mean([one_sided(delta + rng.standard_normal(n), "greater") <= alpha for _ in range(trials)])
    assert power == pytest.approx(0.8, abs=3 * np.sqrt(0.16 / trials) + 0.01)


def test_the_sign_flip_power_is_below_the_t_tests_at_small_levels() -> None:
    critical = stats.t.ppf(1 - 0.0033, 9)
    t_delta = next(d for d in np.arange(1.0, 3.0, 0.001) if stats.nct.sf(critical, 9, d * np.sqrt(10)) >= 0.8)
    assert detectable_effect(10, 0.0033) > t_delta + 0.05
    assert detectable_effect(20, 0.04) == pytest.approx(next(d for d in np.arange(0.3, 1.5, 1e-4)
                                                             if stats.nct.sf(stats.t.ppf(0.96, 19), 19, d * np.sqrt(20)) >= 0.8),
                                                        abs=2e-4)   # beyond EXACT_LIMIT seeds: the t test's
    assert detectable_effect(3) == detectable_effect(3, test="sign") == float("inf")   # no test reaches 5 % with three


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_the_sign_test_is_the_binomial_tail(alternative: str) -> None:
    d = np.array([0.5, 2.0, -1.0, 3.0, 0.0, 1.0, 4.0])        # of seven, five positive, one negative, one zero
    tail = {"greater": stats.binom.sf(4, 7, 0.5), "less": stats.binom.sf(0, 7, 0.5)}   # the zero counts for neither
    tail["two-sided"] = min(1.0, 2 * min(tail["greater"], tail["less"]))
    assert sign_test(d, alternative) == pytest.approx(tail[alternative])
    assert sign_test(np.zeros(4), alternative) == 1.0


def test_ties_at_zero_cannot_make_the_sign_test_decide_a_median_of_zero() -> None:
    """Differences that are 0 in 40 % of seeds, +1 in 45 % and -1 in 15 %: the median is 0, so a
    claim that it is above 0 is false, and the test decides it in at most its level of sets of seeds
    (left out, the zeros would have made it decide in 18 %)."""
    rng = np.random.default_rng(0)
    trials, level = 4000, 0.04
    draws = rng.choice([0.0, 1.0, -1.0], p=[0.4, 0.45, 0.15], size=(trials, 10))
    rate = np.mean([sign_test(d, "greater") <= level for d in draws])
    assert rate <= level + 3 * np.sqrt(level * (1 - level) / trials)


@pytest.mark.parametrize("n", [6, 10])
def test_the_sign_test_holds_its_level_on_skewed_differences_where_the_sign_flip_test_does_not(n: int) -> None:
    """Differences with median 0 but a long right tail (a level claim has no exchangeability to make
    them symmetric): the sign test rejects "the median is below 0" at most at its level; shifted to mean 0,
    the same draws make the sign-flip test reject "the mean is below 0" more than twice as often as its
    level (4 %), since the flips assume symmetry about 0."""
    rng = np.random.default_rng(n)
    trials, level = 3000, 0.05
    draws = rng.lognormal(0.0, 1.5, (trials, n)) - 1.0      # median exactly 0 (e^0 - 1)
    sign_rate = np.mean([sign_test(d, "less") <= level for d in draws])
    assert sign_rate <= level + 3 * np.sqrt(level * (1 - level) / trials)
    mean_zero = draws - (np.exp(1.5 ** 2 / 2) - 1.0)        # the same draws, shifted to mean 0
    flip_rate = np.mean([sign_flip_test(d, "less") <= 0.04 for d in mean_zero])
    assert flip_rate > 2 * 0.04      # most draws below 0, a few far above: "the mean is below 0" past twice its 4 %


@pytest.mark.parametrize("n", [6, 10])
def test_the_median_interval_covers_at_its_level_for_any_continuous_distribution(n: int) -> None:
    rng = np.random.default_rng(n)
    draws = rng.lognormal(0.0, 1.5, (4000, n))              # skewed; median 1
    covered = [low <= 1.0 <= high for _, low, high in (median_interval(d) for d in draws)]
    assert np.mean(covered) >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / 4000)
    values = np.arange(10.0)
    assert median_interval(values) == (4.5, 1.0, 8.0)        # P(Bin(10, 1/2) < 2) = 11/1024 <= 2.5 %
    assert median_interval(np.arange(5.0))[1:] == (float("-inf"), float("inf"))   # 1/32 > 2.5 %: unbounded


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
