r"""Comparisons paired by seed: exact sign-flip tests, t intervals, Holm's correction, detectable effects.

Two configurations trained with the same seed see the same training stream (the seed scheme of
:mod:`~setfuncs.experiments.sweeps`), so the unit of a comparison is the per-seed difference
:math:`d_s = m^A_s - m^B_s` of a metric over the seeds :math:`s` both have run. Under the null
hypothesis that A and B are exchangeable within a seed, each :math:`d_s` is as likely to be
:math:`-d_s`, whatever its distribution; the **sign-flip test** (:func:`sign_flip_test`) compares
the observed mean :math:`\bar d` with its value under all :math:`2^n` sign patterns,

.. math::
    p = \frac{\#\{\varepsilon \in \{\pm 1\}^n : \tfrac1n \sum_s \varepsilon_s d_s \ge \bar d\}}{2^n}

(one-sided, for a claim that A is larger), exactly up to :data:`EXACT_LIMIT` seeds and by Monte
Carlo beyond, with the observed pattern counted so that :math:`p \ge 1/(R+1)`. Its error rate is at
most the level for every distribution symmetric about 0 and every number of seeds; its smallest
possible p-value is :math:`2^{-n}`, so **three seeds can never give p < 0.125 and five never p <
0.031**: no correction can make them decide a claim at 5 %. :func:`smallest_p_value` says so
before any data is looked at.

A claim about one group's own level (a quantity against zero, not two configurations against
each other), or one with a margin (:math:`d_s + \text{margin}`), has no exchangeability to make its
differences symmetric about 0, and the sign-flip test of the mean is exact only under symmetry (on
skewed differences its error rate can exceed the level several times). Such a claim is tested with
the exact **sign test** of the median (:func:`sign_test`): under the null that the median
difference is at most 0, each :math:`d_s` is positive with probability at most 1/2, whatever its
distribution, so the number of positive differences is at most binomial; a difference of exactly 0
counts against the claim, so ties cannot make the test decide a median of 0. Its smallest p-value
is also :math:`2^{-n}`. Its interval is the distribution-free one of the median from two order statistics
(:func:`median_interval`).

The interval of the mean difference is Student's :math:`\bar d \pm t_{n-1, 1-\alpha/2}\, s_d/\sqrt n`
(:func:`t_interval`), the interval with correct small-sample coverage for normal differences.
A table of claims is corrected once with **Holm's** step-down procedure (:func:`holm`), which holds
the family-wise error rate at the level for any dependence between the claims. The smallest effect
the seeds could detect (:func:`detectable_effect`) is the effect, in units of the differences'
standard deviation, that the one-sided test at the level finds with the given power when the
differences are normal: for the sign-flip test from :data:`POWER_SAMPLES` simulated sets of seeds
(exactly the test's own rejections, not the t test's, which needs a smaller effect: at 10 seeds and
the level of a table of twelve claims the sign-flip test has about 72 % power where the t test has
80 %), for the sign test exactly from the binomial distribution.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np

from setfuncs.population import check_sizes

__all__ = ["EXACT_LIMIT", "MONTE_CARLO_FLIPS", "POWER_SAMPLES", "SIMULATED_LIMIT", "ALTERNATIVES", "TESTS", "paired_differences",
           "sign_flip_test", "joint_sign_flip_test", "sign_test", "smallest_p_value", "t_interval", "median_interval", "holm",
           "detectable_effect"]

#: Up to this many seeds the sign-flip test enumerates all 2^n sign patterns.
EXACT_LIMIT = 16
#: Random sign patterns of the Monte Carlo test beyond :data:`EXACT_LIMIT` seeds.
MONTE_CARLO_FLIPS = 100_000
#: ``greater``: the claim is that the mean difference is positive; ``less``: negative; ``two-sided``.
ALTERNATIVES = ("greater", "less", "two-sided")
#: The paired tests, of the mean under symmetry (``sign-flip``) and of the median (``sign``).
TESTS = ("sign-flip", "sign")
#: Simulated sets of normal differences behind the sign-flip test's detectable effect.
POWER_SAMPLES = 20_000
#: Up to this many seeds the sign-flip test's detectable effect is simulated, beyond it is the t test's.
SIMULATED_LIMIT = 12


def paired_differences(a: Mapping[int, float], b: Mapping[int, float]) -> tuple[list[int], np.ndarray]:
    """The seeds that both ``a`` and ``b`` (seed -> metric) hold with finite values, in order, and the
    differences ``a[s] - b[s]``."""
    seeds = sorted(s for s in a.keys() & b.keys() if np.isfinite(a[s]) and np.isfinite(b[s]))
    return seeds, np.array([a[s] - b[s] for s in seeds], dtype=float)


def _differences(d: Sequence[float] | np.ndarray) -> np.ndarray:
    values = np.asarray(d, dtype=float)
    if values.ndim != 1 or values.size == 0 or not np.isfinite(values).all():
        raise ValueError(f"d must be a non-empty 1-D array of finite differences, got {values!r}")
    return values


@lru_cache(maxsize=EXACT_LIMIT)
def _all_signs(n: int) -> np.ndarray:
    """All ``2^n`` sign patterns ``[2^n, n]`` (made once per ``n``, read-only)."""
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    signs.setflags(write=False)
    return signs


def _signs(n: int, flips: int, seed: int) -> np.ndarray:
    """All ``2^n`` sign patterns (``n <= EXACT_LIMIT``), else ``flips`` random ones ``[flips, n]``."""
    if n <= EXACT_LIMIT:
        return _all_signs(n)
    return np.random.default_rng(seed).choice((1.0, -1.0), size=(flips, n))


def sign_flip_test(d: Sequence[float] | np.ndarray, alternative: str = "greater", flips: int = MONTE_CARLO_FLIPS,
                   seed: int = 0) -> float:
    """The p-value of the sign-flip test of the mean of the paired differences ``d`` (see the
    module): exact for ``len(d) <= EXACT_LIMIT``, else from ``flips`` random patterns (drawn with
    ``numpy.random.default_rng(seed)``) with the observed one counted. ``alternative``: one of
    :data:`ALTERNATIVES`; ``two-sided`` compares :math:`|\\bar d|`."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    check_sizes(flips=flips)              # with no random pattern the Monte Carlo p-value would be 1
    values = _differences(d)
    signs = _signs(values.size, flips, seed)
    means = signs @ values / values.size
    observed = values.mean()
    tolerance = 1e-12 * max(1.0, float(np.abs(values).max()))   # equal means up to rounding count as ties
    if alternative == "greater":
        extreme = means >= observed - tolerance
    elif alternative == "less":
        extreme = means <= observed + tolerance
    else:
        extreme = np.abs(means) >= abs(observed) - tolerance
    if values.size <= EXACT_LIMIT:
        return float(extreme.mean())
    return float((extreme.sum() + 1) / (len(means) + 1))


def joint_sign_flip_test(parts: Sequence[Sequence[float] | np.ndarray], alternative: str = "greater",
                         flips: int = MONTE_CARLO_FLIPS, seed: int = 0) -> float:
    r"""The p-value of one sign-flip test of several comparisons at once, by the maximum statistic.

    ``parts`` are :math:`k` arrays of paired differences over the same :math:`n` seeds (part :math:`i`,
    seed :math:`s`: :math:`d_{is}`). One sign pattern :math:`\varepsilon` flips seed :math:`s` in every
    part together, and the statistic is the largest of the parts' Student statistics,

    .. math::
        T(\varepsilon) = \max_i \frac{\overline{\varepsilon d_i}}{s(\varepsilon d_i) / \sqrt n}, \qquad
        p = \frac{\#\{\varepsilon : T(\varepsilon) \ge T(\mathbf 1)\}}{2^n}

    (``greater``: some part's mean is positive; ``less`` negates every part; a part whose flipped
    differences do not vary has the statistic :math:`\pm\infty` by the sign of its mean, 0 if they are
    all 0). A permutation test is exact for any statistic computed afresh on each pattern, so under the null
    that the vector :math:`(d_{1s}, \dots, d_{ks})` of every seed is symmetric about 0, whatever the
    dependence between its parts, the test is exact (the same :math:`2^n` patterns as
    :func:`sign_flip_test`, which it is for :math:`k = 1`: there the Student statistic orders the patterns
    as the mean does). It asks "does some part hold?" with about the power of the strongest part alone;
    studentising keeps a part that holds only weakly but steadily from being outweighed by another's
    scale, where a Bonferroni bound over the parts multiplies the smallest p-value by :math:`k`. Exact up
    to :data:`EXACT_LIMIT` seeds, Monte Carlo beyond (as :func:`sign_flip_test`)."""
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less' (some part above or below 0), got {alternative!r}")
    check_sizes(flips=flips)
    if len(parts) == 0:
        raise ValueError("parts must hold at least one array of differences")
    values = np.stack([_differences(p) for p in parts])
    if values.ndim != 2 or values.shape[1] < 2:
        raise ValueError(f"parts must be arrays of at least two differences each, all over the same seeds, "
                         f"got shapes {[np.shape(p) for p in parts]}")
    if alternative == "less":
        values = -values
    n = values.shape[1]
    signs = _signs(n, flips, seed)
    statistics = _student(signs @ values.T / n, (values ** 2).mean(axis=1), n).max(axis=1)
    observed = _student(values.mean(axis=1)[None, :], (values ** 2).mean(axis=1), n).max()
    extreme = statistics >= observed - 1e-9 * max(1.0, abs(observed)) if np.isfinite(observed) else \
        statistics >= observed
    if n <= EXACT_LIMIT:
        return float(extreme.mean())
    return float((extreme.sum() + 1) / (len(statistics) + 1))


def _student(means: np.ndarray, squares: np.ndarray, n: int) -> np.ndarray:
    r"""Student's statistics :math:`\bar d / (s / \sqrt n)` from the means ``[patterns, parts]`` and the
    parts' mean squares ``[parts]`` (the same under every sign pattern): :math:`s^2 = (\overline{d^2} -
    \bar d^2)\, n/(n - 1)`; a variance within rounding of 0 gives :math:`\pm\infty` by the mean's sign."""
    variance = (squares - means ** 2) * n / (n - 1)
    steady = variance <= 1e-12 * np.maximum(squares, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = means / np.sqrt(np.where(steady, 1.0, variance) / n)
    return np.where(steady, np.where(means > 0, np.inf, np.where(means < 0, -np.inf, 0.0)), t)


def sign_test(d: Sequence[float] | np.ndarray, alternative: str = "greater") -> float:
    r"""The p-value of the exact sign test of the median of the :math:`n` differences ``d`` (see the
    module): ``greater``, for a median above 0, is :math:`P(K \ge k_+)` with :math:`k_+` the number of
    positive differences and :math:`K \sim \text{Bin}(n, 1/2)`; ``less`` the same with the negative ones;
    ``two-sided`` twice the smaller, at most 1. A zero counts for neither side, so it only weakens a
    claim: under a median of at most 0, :math:`P(d_s > 0) \le 1/2` and the p-value is valid, ties or not."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    values = _differences(d)
    greater, less = (_at_least(values.size, int(k)) for k in ((values > 0).sum(), (values < 0).sum()))
    if alternative == "greater":
        return greater
    if alternative == "less":
        return less
    return min(1.0, 2 * min(greater, less))


@lru_cache(maxsize=4096)
def _at_least(n: int, k: int) -> float:
    """:math:`P(K \\ge k)` for :math:`K \\sim \\text{Bin}(n, 1/2)`, exactly (0 for ``k > n``)."""
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2 ** n


def smallest_p_value(n: int, alternative: str = "greater") -> float:
    """The smallest p-value :func:`sign_flip_test` can give with ``n`` seeds: :math:`2^{-n}` one-sided,
    :math:`2^{1-n}` two-sided. A claim is undecidable at level :math:`\\alpha` with fewer seeds than
    make it smaller than :math:`\\alpha`."""
    check_sizes(n=n)
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    return 2.0 ** (-n) * (2 if alternative == "two-sided" else 1)


def t_interval(d: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    r"""``(mean, low, high)``: :math:`\bar d` and Student's ``level`` interval
    :math:`\bar d \pm t_{n-1,(1+\text{level})/2}\, s_d / \sqrt n` (needs two differences)."""
    values = _differences(d)
    if values.size < 2:
        raise ValueError(f"a t interval needs at least two paired differences, got {values.size}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    mean = float(values.mean())
    half = float(_t_quantile((1 + level) / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
    return mean, mean - half, mean + half


def median_interval(d: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    r"""``(median, low, high)``: the median of ``d`` and the distribution-free interval
    :math:`[d_{(j)}, d_{(n+1-j)}]` of the order statistics with the largest :math:`j` for which
    :math:`P(\text{Bin}(n, 1/2) < j) \le (1 - \text{level})/2`; it covers the median with probability at
    least ``level`` for every continuous distribution (the interval that inverts :func:`sign_test`).
    With too few differences for any :math:`j` (five or fewer at 95 %) it is unbounded:
    ``(median, -inf, inf)``."""
    values = np.sort(_differences(d))
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    n = values.size
    # P(Bin(n, 1/2) < j) = P(Bin(n, 1/2) >= n - j + 1) by symmetry; j = 0 always qualifies (unbounded)
    j = max(j for j in range(n // 2 + 1) if _at_least(n, n - j + 1) <= (1 - level) / 2)
    median = float(np.median(values))
    if j == 0:
        return median, float("-inf"), float("inf")
    return median, float(values[j - 1]), float(values[n - j])


@lru_cache(maxsize=256)
def _t_quantile(q: float, df: int) -> float:
    """Student's ``q`` quantile with ``df`` degrees of freedom (made once per pair)."""
    from scipy import stats     # here, not at the top: a sweep's workers import this module and never test
    return float(stats.t.ppf(q, df))


def holm(p_values: Sequence[float]) -> np.ndarray:
    r"""Holm's step-down adjusted p-values, in the given order: with the p-values sorted,
    :math:`p_{(1)} \le \dots \le p_{(m)}`, :math:`\tilde p_{(i)} = \min(1, \max_{j \le i} (m - j + 1)\, p_{(j)})`.
    Rejecting every claim with :math:`\tilde p \le \alpha` holds the family-wise error rate at
    :math:`\alpha` under any dependence."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or ((p < 0) | (p > 1) | np.isnan(p)).any():
        raise ValueError(f"p_values must be a 1-D sequence of numbers in [0, 1], got {p_values!r}")
    order = np.argsort(p, kind="stable")
    scaled = (p.size - np.arange(p.size)) * p[order]
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


def detectable_effect(n: int, alpha: float = 0.05, power: float = 0.8, test: str = "sign-flip") -> float:
    r"""The smallest standardised effect :math:`\delta = \mu_d / \sigma_d` that the one-sided ``test``
    (one of :data:`TESTS`) at level ``alpha`` with ``n`` seeds detects with probability ``power``
    when the differences are normal, :math:`d_s \sim N(\delta, 1)`:

    * ``"sign-flip"``: from :data:`POWER_SAMPLES` simulated sets of ``n`` differences (a fixed
      random stream, so the same arguments give the same value); beyond :data:`SIMULATED_LIMIT`
      seeds, where the simulation grows slow (:math:`2^n` patterns per set), the one-sided t test's
      effect (the root of
      :math:`P(T_{n-1}(\delta\sqrt n) > t_{n-1,1-\alpha}) = \text{power}`, :math:`T` noncentral t),
      which the sign-flip test approaches as the seeds grow;
    * ``"sign"``: exactly, :math:`P(\text{Bin}(n, \Phi(\delta)) \ge c) = \text{power}` with :math:`c`
      the test's critical number of positive differences.

    With :func:`smallest_p_value` above ``alpha`` the test can detect nothing: infinity."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an int of at least 2 seeds, got {n!r}")
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError(f"alpha and power must lie in (0, 1), got {alpha} and {power}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    if smallest_p_value(n) > alpha:
        return float("inf")
    if test == "sign":
        return _sign_effect(n, float(alpha), float(power))
    if n > SIMULATED_LIMIT:
        return _t_effect(n, float(alpha), float(power))
    return _sign_flip_effect(n, float(alpha), float(power))


@lru_cache(maxsize=1024)
def _sign_flip_effect(n: int, alpha: float, power: float) -> float:
    r"""The sign-flip test's detectable effect (:func:`detectable_effect`). For differences
    :math:`d = z + \delta`, a sign pattern :math:`\varepsilon \ne \mathbf 1` counts towards the p-value
    iff :math:`t_\varepsilon = \sum_s (\varepsilon_s - 1) z_s / (n - \sum_s \varepsilon_s) \ge \delta`, and
    the test rejects iff at most :math:`K = \lfloor \alpha 2^n \rfloor - 1` do: iff :math:`\delta` exceeds
    the :math:`(K+1)`-th largest :math:`t_\varepsilon`. That threshold is computed once per simulated
    :math:`z`; the power at :math:`\delta` is the share of thresholds below it, so the effect is their
    ``power`` quantile."""
    signs = _all_signs(n)[1:]                           # every pattern but all +1 (the first)
    scale = n - signs.sum(axis=1)                       # > 0
    k = math.floor(alpha * 2 ** n + 1e-9) - 1
    rng = np.random.default_rng(2 ** n)
    chunk = max(1, 2 ** 22 // 2 ** n)
    thresholds = []
    for start in range(0, POWER_SAMPLES, chunk):
        z = rng.standard_normal((min(chunk, POWER_SAMPLES - start), n))
        t = z @ (signs - 1).T / scale
        thresholds.append(-np.partition(-t, k, axis=1)[:, k])
    return float(np.quantile(np.concatenate(thresholds), power))


@lru_cache(maxsize=1024)
def _sign_effect(n: int, alpha: float, power: float) -> float:
    """The sign test's detectable effect (:func:`detectable_effect`), exactly."""
    from scipy import optimize, stats
    critical = next(c for c in range(n + 1) if _at_least(n, c) <= alpha)

    def shortfall(q: float) -> float:
        return float(stats.binom.sf(critical - 1, n, q) - power)

    return float(stats.norm.ppf(optimize.brentq(shortfall, 0.5, 1 - 1e-12)))


@lru_cache(maxsize=1024)
def _t_effect(n: int, alpha: float, power: float) -> float:
    """The one-sided t test's detectable effect (:func:`detectable_effect`), from the noncentral t."""
    from scipy import optimize, stats
    critical = stats.t.ppf(1 - alpha, n - 1)

    def shortfall(delta: float) -> float:
        return float(stats.nct.sf(critical, n - 1, delta * np.sqrt(n)) - power)

    return float(optimize.brentq(shortfall, 0.0, 50.0))
