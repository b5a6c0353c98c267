r"""What each point-cloud column costs and how it behaves away from Table 2's sizes (not in the paper).

For every column, over its finished runs that did not collapse: the mean test accuracy at the
training size :math:`n_0` and at 10 points, the spread over seeds at :math:`n_0` (best minus worst),
the gain of testing on more points than trained on,
:math:`\bar a(n_{\max}) - \bar a(n_0)` with :math:`n_{\max}` the largest tested size, the median
training throughput (clouds per second) and the median training time per run.
"""

from __future__ import annotations

import numpy as np

from ..schema import run_status, trained_runs
from .sweep import COLUMNS

__all__ = ["cost_table", "throughput_spread"]


def cost_table(results: dict) -> list[dict]:
    """One row per column of :data:`~setfuncs.experiments.pointcloud.COLUMNS` with runs that neither
    diverged nor collapsed, in that order.

    Keys: ``spec, runs, parameters``, ``acc_train`` (mean accuracy at the training size),
    ``spread`` (its best minus worst seed; None for a single run), ``gain_top`` (mean accuracy at
    the largest tested size minus at the training size), ``acc_10`` (mean accuracy at 10 points),
    ``throughput`` (median training clouds per second) and ``seconds`` (median training seconds per run).
    """
    train_points = results["budget_parameters"]["points"]
    top = max(results["evaluation"]["sizes"])
    rows = []
    for spec in COLUMNS:
        runs = [r for r in trained_runs(results) if r["spec"] == spec]
        if not runs:
            continue

        def at(n: int) -> list[float]:
            return [r["accuracy_by_population_size"][str(n)] for r in runs]

        rows.append({"spec": spec, "runs": len(runs), "parameters": runs[0]["parameters"],
                     "acc_train": float(np.mean(at(train_points))),
                     "spread": float(np.ptp(at(train_points))) if len(runs) > 1 else None,
                     "gain_top": float(np.mean(at(top)) - np.mean(at(train_points))),
                     "acc_10": float(np.mean(at(10))),
                     "throughput": float(np.median([r["clouds_per_second"] for r in runs])),
                     "seconds": float(np.median([r["train_seconds"] for r in runs]))})
    return rows


def throughput_spread(results: dict) -> float:
    """The largest ratio of the fastest to the slowest run of one column that trained to the end,
    collapsed or not (clouds per second), over the columns: how much the machine's load varied between runs."""
    speeds = [[r["clouds_per_second"] for r in results["runs"]
               if r["spec"] == spec and run_status(r) in ("trained", "collapsed")] for spec in COLUMNS]
    return max(max(v) / min(v) for v in speeds if v)
