r"""Peak statistics: the best run of a group, and the best of batches of runs.

A study that trains a batch of :math:`k` runs reports its best. From the metrics :math:`m_1, \dots,
m_R` of a group's runs (lower is better), :func:`batch_peaks` draws ``bootstraps`` batches of
:math:`k` runs with replacement and records each batch's best,

.. math:: \text{peak}_b = \min_{j \in \text{batch}_b} m_j, \qquad b = 1, \dots, \text{bootstraps},

and :func:`median_peak` is their median: the paper's *median best MSE* of Table 1 (batches of 20)
and the peak :math:`P` of Figure 4b's findings (batches of 5). Unlike the best of all runs, it does
not grow better with the number of runs. The draws are indices into ``metrics``, so the same runs in
another order give other batches: the tables pass their runs' metrics by configuration and seed
(:func:`~setfuncs.experiments.results.sorted_runs`), never in the order the runs finished in.

**Which runs are ranked.** Only a trained run (:func:`~setfuncs.experiments.schema.run_status`)
with a finite metric (:func:`finite_metric`). A NaN (which the results reader restores from the
writer's ``null`` and ``non_finite`` form) compares false with every number, so ``min`` would
keep a NaN that comes first and pass over one that comes later; an infinity is no measurement
either. Tables therefore leave such runs out of their best runs and statistics (and count them);
findings count them as :math:`+\infty`, the worst outcome (:mod:`setfuncs.experiments.findings`).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .paired import _all_signs
from .schema import run_status

__all__ = ["finite_metric", "check_batches", "batch_peaks", "median_peak", "median_peaks", "swap_test"]


def finite_metric(run: dict, key: str, size: int | None = None,
                  statuses: tuple[str, ...] = ("trained",)) -> float | None:
    """A trained run's metric ``run[key]`` (or, with ``size``, the entry ``str(size)`` of the metric map
    ``run[key]``) if it is a finite number; None for a run that is not trained (failed, diverged or
    collapsed), a missing value, NaN or an infinity. ``statuses``: the run statuses
    (:func:`~setfuncs.experiments.schema.run_status`) whose metric is read, e.g. ``("trained",
    "collapsed")`` for the value a collapsed run measured."""
    if run_status(run) not in statuses:
        return None
    value = run.get(key) if size is None else (run.get(key) or {}).get(str(size))
    return None if value is None or not math.isfinite(value) else float(value)


def check_batches(batch_size: int, bootstraps: int) -> None:
    """A ValueError that names the argument unless ``batch_size`` and ``bootstraps`` are positive ints."""
    for name, value in (("batch_size", batch_size), ("bootstraps", bootstraps)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def batch_peaks(metrics: np.ndarray, batch_size: int = 5, bootstraps: int = 1000, seed: int = 0) -> np.ndarray:
    r"""``[bootstraps]`` peaks :math:`\text{peak}_b = \min_{j \in \text{batch}_b} m_j`: the best (lowest) of
    ``metrics`` (one per run, ``[R]``) in each of ``bootstraps`` batches of ``batch_size`` runs, the
    batches' indices drawn at once, ``numpy.random.default_rng(seed).integers(0, R, (bootstraps,
    batch_size))``. ``+inf`` (a run that learnt nothing) is allowed; NaN is not (see the module)."""
    check_batches(batch_size, bootstraps)
    metrics = np.asarray(metrics)
    if metrics.ndim != 1 or metrics.size == 0:
        raise ValueError(f"metrics must hold one number per run, at least one; got shape {metrics.shape}")
    if np.isnan(metrics).any():
        raise ValueError("metrics holds NaN, which no batch's best can rank; leave such runs out "
                         "(finite_metric) or count them as +inf, the worst outcome")
    rng = np.random.default_rng(seed)
    return metrics[rng.integers(0, metrics.size, size=(bootstraps, batch_size))].min(axis=1)


def median_peak(metrics: np.ndarray, batch_size: int = 5, bootstraps: int = 1000, seed: int = 0) -> float:
    r"""The median peak :math:`\operatorname{median}_b \text{peak}_b` of :func:`batch_peaks` (same
    arguments, same draws)."""
    return float(np.median(batch_peaks(metrics, batch_size, bootstraps, seed)))


def median_peaks(metrics: np.ndarray, batch_size: int = 5, bootstraps: int = 1000, seed: int = 0,
                 chunk: int = 64) -> np.ndarray:
    """:func:`median_peak` of every row of ``metrics`` ``[groups, R]`` at once, each row with the same
    draws (the same generator and arguments as :func:`median_peak`, so row ``i`` gives
    ``median_peak(metrics[i], ...)`` exactly); ``chunk`` rows at a time."""
    check_batches(batch_size, bootstraps)
    metrics = np.asarray(metrics, dtype=float)
    if metrics.ndim != 2 or metrics.shape[1] == 0:
        raise ValueError(f"metrics must be [groups, runs] with at least one run, got shape {metrics.shape}")
    if np.isnan(metrics).any():
        raise ValueError("metrics holds NaN, which no batch's best can rank; count such runs as +inf")
    index = np.random.default_rng(seed).integers(0, metrics.shape[1], size=(bootstraps, batch_size))
    return np.concatenate([np.median(metrics[start:start + chunk][:, index].min(axis=2), axis=1)
                           for start in range(0, len(metrics), chunk)])


def swap_test(a: np.ndarray, b: np.ndarray, statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
              alternative: str = "greater") -> float:
    r"""The exact p-value of swapping two settings' labels within seeds, for any ``statistic``.

    ``a`` and ``b`` are the two settings' metrics ``[seeds, units]``, unit :math:`u` of seed :math:`s` of
    one matched with the same unit of the other (e.g. the same aggregations). A pattern
    :math:`\varepsilon \in \{\pm 1\}^n` gives ``a`` the seeds with :math:`\varepsilon_s = 1` of ``a`` and
    the others of ``b`` (and ``b`` the rest); ``statistic(A, B)`` maps the patterns' ``[patterns,
    seeds * units]`` arrays (unit-major: every seed of unit 0, then of unit 1, ...) to one number per
    pattern, and the p-value is the share of the :math:`2^n` patterns whose statistic is at least the
    observed one (``greater``) or at most (``less``). Under the null that the two settings are
    exchangeable within every seed, each pattern is as likely as the observed one, so the test is exact
    for every statistic: a peak such as the median best of batches
    (:func:`median_peaks`) included. A rejection says that the settings differ; that they differ in
    the statistic's direction is what the one-sided p-value measures. Exact enumeration, so at most
    16 seeds; a NaN statistic counts as not extreme."""
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less', got {alternative!r}")
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 1:
        raise ValueError(f"a and b must be matched [seeds, units] arrays, got shapes {a.shape} and {b.shape}")
    if a.shape[0] > 16:
        raise ValueError(f"swap_test enumerates 2^n patterns, so at most 16 seeds; got {a.shape[0]}")
    keep = _all_signs(a.shape[0])[:, :, None] > 0                  # [patterns, seeds, 1]; the first: all +1
    left = np.where(keep, a, b).transpose(0, 2, 1).reshape(len(keep), -1)
    right = np.where(keep, b, a).transpose(0, 2, 1).reshape(len(keep), -1)
    values = np.asarray(statistic(left, right), dtype=float)
    observed = values[0]
    if np.isnan(observed):
        raise ValueError("the statistic of the observed labels is NaN; it cannot be ranked")
    tolerance = 1e-12 * max(1.0, abs(observed)) if np.isfinite(observed) else 0.0
    extreme = values >= observed - tolerance if alternative == "greater" else values <= observed + tolerance
    return float(np.mean(extreme & ~np.isnan(values)))
