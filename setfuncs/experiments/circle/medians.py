r"""The median test MSE of every circle configuration, and what chapter 8 reads from it.

A configuration's runs differ only in their seed; its typical result is the median of their test
MSEs, :math:`\tilde m = \operatorname{median}_s \text{MSE}_s`, where a run that diverged or
collapsed counts as :math:`+\infty` (:func:`~setfuncs.experiments.circle.metric.mse_by_spec`):
when at least half the seeds failed, the median is infinite.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..sweeps import AGGREGATIONS, PAPER_AGGREGATIONS, SETTINGS, paper_configurations, spec_of

__all__ = ["median_mse", "best_configuration", "median_grids", "lowest_counts"]


def median_mse(mse_of: Mapping[str, np.ndarray], spec: str) -> float:
    """The median over seeds of the test MSEs of ``spec``; NaN for a spec without runs.

    ``mse_of``: every configuration's MSEs, :func:`~setfuncs.experiments.circle.mse_by_spec`.
    """
    return float(np.median(mse_of[spec])) if spec in mse_of else np.nan


def best_configuration(mse_of: Mapping[str, np.ndarray], setting: str) -> tuple[str, str, str]:
    """The paper's configuration ``(setting, equivariant, final)`` of ``setting`` with the lowest
    :func:`median_mse` (the first in :func:`~setfuncs.experiments.sweeps.paper_configurations` order on a tie)."""
    configs = [c for c in paper_configurations() if c[0] == setting]
    if not configs:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    return min(configs, key=lambda c: median_mse(mse_of, spec_of(*c)))


def median_grids(mse_of: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """For every setting, the :func:`median_mse` of every configuration as a grid
    ``[equivariant, final]`` over :data:`~setfuncs.experiments.sweeps.AGGREGATIONS` (rows and
    columns in that order); NaN where the sweep has no runs and where LSE and log-mean-exp would
    meet (the sweep never mixes them)."""
    return {setting: np.array([[np.nan if {"lse", "lme"} <= {e, f} else median_mse(mse_of, spec_of(setting, e, f))
                                for f in AGGREGATIONS] for e in AGGREGATIONS]) for setting in SETTINGS}


def lowest_counts(grids: Mapping[str, np.ndarray]) -> tuple[dict[str, int], dict[str, int]]:
    """On the paper's grid (the first three rows and columns of every :func:`median_grids` grid):
    how often each aggregation gives the lowest median MSE in a row (as the final aggregation,
    with the equivariant one fixed) and in a column (as the equivariant aggregation); over the
    four settings there are 12 rows and 12 columns."""
    k = len(PAPER_AGGREGATIONS)
    paper = [grid[:k, :k] for grid in grids.values()]
    final = [PAPER_AGGREGATIONS[int(np.argmin(row))] for grid in paper for row in grid]
    equivariant = [PAPER_AGGREGATIONS[int(np.argmin(column))] for grid in paper for column in grid.T]
    return ({a: final.count(a) for a in PAPER_AGGREGATIONS}, {a: equivariant.count(a) for a in PAPER_AGGREGATIONS})
