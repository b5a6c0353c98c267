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

**Only runs of one sweep pair.** A configuration and seed name the same run only within one
sweep's identity (:func:`file_identity`: the experiment, the budget and every one of its
parameters, the data), so files of two budgets, or of two data sets, are refused with the fields
in which they differ; and two records paired by configuration and seed must agree on the fields
that name the configuration (:data:`CONFIGURATION_FIELDS`), so that a copy whose labels were
swapped between configurations is refused rather than compared by value. **A committed metric of
0** has no relative difference from a rerun's other value: it is infinite there, and the row says
so in its ``note`` and gives the absolute difference beside it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .results import sorted_runs
from .strictjson import named_differences
from .schema import trained_runs

__all__ = ["CONFIGURATION_FIELDS", "file_identity", "rerun_agreement"]

#: The fields of a run's record, besides its ``spec``, that name its configuration (those a record has).
CONFIGURATION_FIELDS = ("setting", "equivariant", "final", "localiser", "data")
#: The header fields that stand for the identity of a file that records none (runs put together by hand).
_HEADER_IDENTITY = ("experiment", "budget", "budget_parameters")


def file_identity(results: dict) -> dict:
    """What makes a results file's runs the runs of one sweep: its ``identity`` as the sweep wrote it
    (:func:`~setfuncs.experiments.provenance.sweep_identity`: experiment, budget and its parameters,
    data), or, for a file that records none, those of its ``experiment``, ``budget`` and
    ``budget_parameters`` that it holds."""
    if "identity" in results:
        return results["identity"]
    return {key: results[key] for key in _HEADER_IDENTITY if key in results}


def _same_bits(a: float, b: float) -> bool:
    """Whether two floats are one number bit for bit (``-0.0`` is not ``0.0``)."""
    return float(a).hex() == float(b).hex()


def _relative(old: float, new: float) -> float:
    """:math:`|m' - m| / |m|`; 0 for equal values (two zeros included), infinite against a committed 0."""
    if new == old:
        return 0.0
    return math.inf if old == 0 else abs(new - old) / abs(old)


def rerun_agreement(rerun: dict, committed: dict, metric: str,
                    names: tuple[str, str] = ("the rerun", "the committed file")) -> dict[str, dict[str, Any]]:
    """Per configuration (``spec``, in sorted order) with a trained run of the same seed in both files:
    ``seeds`` (how many are paired), ``identical`` (how many have the same ``metric`` bit for bit),
    ``largest_relative_difference`` (0.0 when all are identical; infinite where a committed metric is 0
    and the rerun's is not, which ``note`` then says), ``largest_absolute_difference``, the median
    ``metric`` over the paired seeds in each file, ``median_committed`` and ``median_rerun``, and
    ``note`` (empty, or why a relative difference is infinite).

    ``names`` name the two files in the errors. A ValueError if the files are not runs of one sweep
    (:func:`file_identity` differs: another experiment, budget, budget parameter or data set; the
    message names every field that differs, with both values), if two paired runs disagree on a field
    that names their configuration (:data:`CONFIGURATION_FIELDS`: a relabelled copy), or if the files
    pair no run."""
    if rerun.get("experiment") != committed.get("experiment"):
        raise ValueError(f"{names[0]} and {names[1]} must be runs of one experiment, got {rerun.get('experiment')!r} "
                         f"and {committed.get('experiment')!r}")
    differ = named_differences(file_identity(rerun), file_identity(committed), names, root="identity")
    if differ:
        raise ValueError(f"{names[0]} and {names[1]} are not runs of one sweep (experiment, budget and its parameters, "
                         f"data), so a configuration and seed do not name one run in both: {'; '.join(differ)}")
    before = {(r["spec"], r["seed"]): r for r in trained_runs(committed)}
    pairs: dict[str, list[tuple[int, float, float]]] = {}
    for run in sorted_runs(trained_runs(rerun)):
        old_run = before.get((run["spec"], run["seed"]))
        if old_run is None:
            continue
        relabelled = [f"{key} {old_run.get(key)!r} in {names[1]}, {run.get(key)!r} in {names[0]}"
                      for key in CONFIGURATION_FIELDS
                      if (key in run or key in old_run) and run.get(key) != old_run.get(key)]
        if relabelled:
            raise ValueError(f"{run['spec']} seed {run['seed']} is not the same configuration in both files: "
                             f"{'; '.join(relabelled)}. The records' labels disagree (a copy relabelled by hand?), "
                             f"so their values cannot be compared")
        old, new = old_run[metric], run[metric]
        if math.isfinite(old) and math.isfinite(new):
            pairs.setdefault(run["spec"], []).append((run["seed"], old, new))
    if not pairs:
        raise ValueError(f"{names[0]} and {names[1]} pair no trained run (the same spec and seed)")
    rows = {}
    for spec, both in pairs.items():
        zeros = [seed for seed, old, new in both if old == 0 and new != 0]
        rows[spec] = {"seeds": len(both), "identical": sum(_same_bits(old, new) for _, old, new in both),
                      "largest_relative_difference": max(_relative(old, new) for _, old, new in both),
                      "largest_absolute_difference": max(abs(new - old) for _, old, new in both),
                      "median_committed": float(np.median([old for _, old, _ in both])),
                      "median_rerun": float(np.median([new for _, _, new in both])),
                      "note": "" if not zeros else
                      (f"the committed {metric} is 0 at seed{'s' * (len(zeros) > 1)} {', '.join(map(str, zeros))}, "
                       f"where the rerun's is not: no relative difference there (infinite); see the absolute one")}
    return rows
