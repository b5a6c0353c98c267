"""Count accuracy and box IoU of every set localiser at every population size, mean over seeds.

:func:`~setfuncs.experiments.attention.attention_table` gives both at the training size only; a set
localiser was tested at every size of the sweep, and how its counts and boxes degrade with fewer
particles is what Figure 5a shows.
"""

from __future__ import annotations

from .localisers import IMAGE
from .table import attention_table, mean_over_runs, usable_runs

__all__ = ["METRICS", "metrics_by_size"]

#: The per-size metrics: the share of canvases counted right, and the IoU of matched boxes.
METRICS = ("count_accuracy", "box_iou")


def metrics_by_size(results: dict) -> list[dict]:
    """One row per set localiser with runs, in :func:`~setfuncs.experiments.attention.attention_table`
    order: ``spec`` and, for every evaluated size ``n``, ``count_accuracy_<n>`` and ``box_iou_<n>``,
    the mean over its usable runs (:func:`~setfuncs.experiments.attention.mean_over_runs`; None if
    no run has the value)."""
    sizes = sorted(int(n) for n in results["evaluation"]["sizes"])
    rows = []
    for row in attention_table(results):
        if row["spec"] == IMAGE:
            continue
        runs, _ = usable_runs(results, row["spec"])
        rows.append({"spec": row["spec"], **{f"{key}_{n}": mean_over_runs(runs, key, str(n))
                                             for n in sizes for key in METRICS}})
    return rows
