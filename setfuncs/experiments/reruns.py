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
    rows: dict[str, dict[str, Any]] = {}
    for run in trained_runs(rerun):
        old = before.get((run["spec"], run["seed"]))
        if old is None or not math.isfinite(old) or not math.isfinite(run[metric]):
            continue
        row = rows.setdefault(run["spec"], {"seeds": 0, "identical": 0, "largest_relative_difference": 0.0,
                                            "committed": [], "rerun": []})
        row["seeds"] += 1
        row["identical"] += run[metric] == old
        row["largest_relative_difference"] = max(row["largest_relative_difference"], abs(run[metric] - old) / abs(old))
        row["committed"].append(old)
        row["rerun"].append(run[metric])
    if not rows:
        raise ValueError("the rerun and the committed file pair no trained run (the same spec and seed)")
    for row in rows.values():
        row["median_committed"] = float(np.median(row.pop("committed")))
        row["median_rerun"] = float(np.median(row.pop("rerun")))
    return rows
