"""Every point-cloud run's test accuracy, by configuration and seed: what the claims of Table 2 pair.

A collapsed run keeps its measured accuracy (it learnt the class frequencies, a real outcome); a run that
diverged, or whose accuracy at a size is missing or not finite
(:func:`~setfuncs.experiments.peaks.finite_metric`), has none (NaN).
"""

from __future__ import annotations

import numpy as np

from ..peaks import finite_metric
from ..results import sorted_runs
from ..schema import finished_runs
from .budget import TABLE_SIZES

__all__ = ["accuracy_by_run", "accuracy_at_training_size"]


def accuracy_by_run(results: dict, n: int, collapsed: bool = True) -> dict[tuple[str, int], float]:
    """``{(spec, seed): accuracy at n}`` of every finished run, by configuration and seed: a collapsed
    run's measured accuracy (``collapsed=False``: NaN), NaN for a run that diverged or whose accuracy
    at ``n`` is missing or not finite (:func:`~setfuncs.experiments.peaks.finite_metric`)."""
    statuses = ("trained", "collapsed") if collapsed else ("trained",)
    out = {}
    for run in sorted_runs(finished_runs(results)):
        value = finite_metric(run, "accuracy_by_population_size", n, statuses)
        out[(run["spec"], run["seed"])] = np.nan if value is None else value
    return out


def accuracy_at_training_size(results: dict) -> dict[tuple[str, int], float]:
    """``{(spec, seed): accuracy}`` at Table 2's first size, the training size (1,000 points):
    :func:`accuracy_by_run` there."""
    return accuracy_by_run(results, TABLE_SIZES[0])
