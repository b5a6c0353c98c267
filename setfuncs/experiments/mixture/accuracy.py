r"""Point accuracy against the KDE metric, per equivariant aggregation: accurate, but too sure?

The metric of Figure 4b scores the *distribution* of a network's estimates against EM's; a network
can be the better point estimator (a smaller mean absolute error of its Beta mean,
:math:`\frac1P \sum_p |\hat w_p - w_p|`) and still lose on the metric, when its Beta is too narrow
to put density on the truth. This regroups the sweep's runs by the aggregation in their
equivariant layers, plain or learnable, and sets both measures side by side.
"""

from __future__ import annotations

import numpy as np

from ..results import sorted_runs
from ..schema import trained_runs
from ..sweeps import AGGREGATIONS

__all__ = ["accuracy_against_metric"]


def accuracy_against_metric(results: dict, em_mae: float, size: int = 100) -> list[dict]:
    """One row per equivariant aggregation with runs, plain then learnable (recurrent) for each of
    :data:`~setfuncs.experiments.sweeps.AGGREGATIONS`, over the runs that finished (no engine
    failure, no divergence) and did not collapse.

    Keys: ``group`` (e.g. ``"r-lse"``), ``runs``, ``mae`` (the median over runs of their mean
    absolute error), ``better`` (the share of runs with a smaller one than ``em_mae``, EM's on the
    same test populations), ``median_metric`` (the median over runs of each run's metric, itself a
    median over populations), ``mean_metric`` (the median over runs of each run's mean metric over
    the populations of ``size`` particles) and ``floor`` (the median over runs of the model KDEs at
    the bandwidth floor).
    """
    usable = sorted_runs(trained_runs(results))           # one order, whatever the file's
    rows = []
    for family in AGGREGATIONS:
        for learnable in (False, True):
            group = [r for r in usable
                     if r["equivariant"] == family and r["setting"].startswith("recurrent") == learnable]
            if not group:
                continue
            rows.append({"group": ("r-" if learnable else "") + family, "runs": len(group),
                         "mae": np.median([r["test_mae"] for r in group]),
                         "better": np.mean([r["test_mae"] < em_mae for r in group]),
                         "median_metric": np.median([r["metric"] for r in group]),
                         "mean_metric": np.median([np.mean(r["metric_per_population"][str(size)]) for r in group]),
                         "floor": np.median([r["kde_floor_hits"] for r in group])})
    return rows
