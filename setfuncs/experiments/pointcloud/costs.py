r"""What each point-cloud column costs and how it behaves away from Table 2's sizes (not in the paper).

For every column with runs that trained to the end: over those that did not collapse, the mean test
accuracy at the training size :math:`n_0` and at 10 points, the spread over seeds at :math:`n_0`
(best minus worst) and the gain of testing on more points than trained on,
:math:`\bar a(n_{\max}) - \bar a(n_0)` with :math:`n_{\max}` the largest tested size; over all of
them, collapsed or not (a collapsed run paid for its training too), the median training throughput
(clouds per second) and the median training time per run.
"""

from __future__ import annotations

import numpy as np

from ..results import sorted_runs
from ..schema import run_status
from .sweep import COLUMNS

__all__ = ["cost_table", "throughput_spread"]


def _ended_runs(results: dict, spec: str) -> list[dict]:
    """The runs of column ``spec`` that trained to the end, collapsed or not (they paid for all their
    steps), in seed order (:func:`~setfuncs.experiments.results.sorted_runs`), whatever order they
    finished in."""
    return [r for r in sorted_runs(results) if r["spec"] == spec and run_status(r) in ("trained", "collapsed")]


def cost_table(results: dict) -> list[dict]:
    """One row per column of :data:`~setfuncs.experiments.pointcloud.COLUMNS` with runs that trained
    to the end (collapsed or not; a diverged run has no accuracy and no full training time), in that order.

    Keys: ``spec``, ``runs`` (those runs), ``collapsed`` (how many of them collapsed), ``parameters``;
    over the runs that did not collapse (None where every run collapsed): ``acc_train`` (mean accuracy
    at the training size), ``spread`` (its best minus worst seed; None for a single run), ``gain_top``
    (mean accuracy at the largest tested size minus at the training size), ``acc_10`` (mean accuracy
    at 10 points); over all the column's runs: ``throughput`` (median training clouds per second) and
    ``seconds`` (median training seconds per run).
    """
    train_points = results["budget_parameters"]["points"]
    top = max(results["evaluation"]["sizes"])
    rows = []
    for spec in COLUMNS:
        ended = _ended_runs(results, spec)
        if not ended:
            continue
        runs = [r for r in ended if run_status(r) == "trained"]

        def mean_at(n: int) -> float | None:
            return float(np.mean([r["accuracy_by_population_size"][str(n)] for r in runs])) if runs else None

        at_train = [r["accuracy_by_population_size"][str(train_points)] for r in runs]
        rows.append({"spec": spec, "runs": len(ended), "collapsed": len(ended) - len(runs),
                     "parameters": ended[0]["parameters"], "acc_train": mean_at(train_points),
                     "spread": float(np.ptp(at_train)) if len(runs) > 1 else None,
                     "gain_top": mean_at(top) - mean_at(train_points) if runs else None,
                     "acc_10": mean_at(10),
                     "throughput": float(np.median([r["clouds_per_second"] for r in ended])),
                     "seconds": float(np.median([r["train_seconds"] for r in ended]))})
    return rows


def throughput_spread(results: dict) -> float:
    """The largest ratio of the fastest to the slowest run of one column that trained to the end,
    collapsed or not (clouds per second), over the columns: how much the machine's load varied between runs."""
    speeds = [[r["clouds_per_second"] for r in _ended_runs(results, spec)] for spec in COLUMNS]
    return max(max(v) / min(v) for v in speeds if v)
