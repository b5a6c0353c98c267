r"""Does a rerun reproduce the committed runs? The same configuration and seed, compared run by run.

A run is fixed by its configuration and seed: the seed sets the initialisation and the training
stream (:mod:`~setfuncs.experiments.protocol`). Rerunning it with the same code gives the same
numbers bit for bit; a change of the code that moves only the rounding of a computation (a fused
kernel in place of separate products, another order of a sum) gives another run, since training
amplifies any difference of its first steps. :func:`rerun_agreement` pairs every run of a rerun
with the committed run of the same configuration and seed and says, per configuration, how many
agree bit for bit and the largest relative difference of a metric,

.. math:: \max_s \frac{|m'_s - m_s|}{|m_s|},

over its paired seeds :math:`s`, with :math:`m_s` the committed run's metric and :math:`m'_s` the rerun's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .schema import trained_runs

__all__ = ["rerun_agreement"]


def rerun_agreement(rerun: dict, committed: dict, metric: str) -> dict[str, dict[str, Any]]:
    """Per configuration (``spec``) with a trained run of the same seed in both files: ``seeds`` (how
    many are paired), ``identical`` (how many have the same ``metric`` bit for bit),
    ``largest_relative_difference`` (0.0 when all are identical), and the median ``metric`` over the
    paired seeds in each file, ``median_committed`` and ``median_rerun``. A ValueError if the files
    are of different experiments or pair no run."""
    if rerun.get("experiment") != committed.get("experiment"):
        raise ValueError(f"rerun and committed must be runs of one experiment, got {rerun.get('experiment')!r} "
                         f"and {committed.get('experiment')!r}")
    before = {(r["spec"], r["seed"]): r[metric] for r in trained_runs(committed)}
    pairs: dict[str, list[tuple[float, float]]] = {}
    for run in trained_runs(rerun):
        old = before.get((run["spec"], run["seed"]))
        if old is not None and math.isfinite(old) and math.isfinite(run[metric]):
            pairs.setdefault(run["spec"], []).append((old, run[metric]))
    if not pairs:
        raise ValueError("the rerun and the committed file pair no trained run (the same spec and seed)")
    return {spec: {"seeds": len(both), "identical": sum(old == new for old, new in both),
                   "largest_relative_difference": max(abs(new - old) / abs(old) for old, new in both),
                   "median_committed": float(np.median([old for old, _ in both])),
                   "median_rerun": float(np.median([new for _, new in both]))}
            for spec, both in pairs.items()}
