"""Every circle run's test MSE, a run that learnt nothing counted as +inf (the worst outcome).

A run that diverged or collapsed, or whose MSE is not a finite number
(:func:`~setfuncs.experiments.peaks.finite_metric`), has no measurement to rank; the findings and
the per-configuration medians count it as an infinite MSE.
"""

from __future__ import annotations

import numpy as np

from ..peaks import finite_metric
from ..results import sorted_runs
from ..schema import finished_runs

__all__ = ["mse_by_spec", "mse_by_run"]


def mse_by_run(results: dict) -> dict[tuple[str, int], float]:
    """``{(spec, seed): test MSE}`` of every finished run, by configuration and seed; +inf for a run
    that learnt nothing."""
    out = {}
    for run in sorted_runs(finished_runs(results)):
        mse = finite_metric(run, "mse")
        out[(run["spec"], run["seed"])] = np.inf if mse is None else mse
    return out


def mse_by_spec(results: dict) -> dict[str, np.ndarray]:
    """Every configuration's test MSEs, one per finished run in seed order (configurations in
    :func:`~setfuncs.experiments.results.sorted_runs` order, not the order the runs finished in); +inf
    for a run that learnt nothing."""
    groups: dict[str, list[float]] = {}
    for run in sorted_runs(finished_runs(results)):
        mse = finite_metric(run, "mse")
        groups.setdefault(run["spec"], []).append(np.inf if mse is None else mse)
    return {spec: np.array(values, dtype=float) for spec, values in groups.items()}
