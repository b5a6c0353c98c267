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

import numpy as np

from .schema import run_status

__all__ = ["finite_metric", "check_batches", "batch_peaks", "median_peak"]


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
