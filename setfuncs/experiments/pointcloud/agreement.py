r"""Do our columns rank as the paper's do? Spearman's rank correlation per row of Table 2.

Our accuracies come from another data set (the offline shapes) than the paper's (ModelNet40), so
the numbers do not compare, but the order of the columns may. For each population size :math:`n`,
:math:`\rho_n` is Spearman's correlation between our mean accuracies and the paper's over the
columns of Table 2 that both have: 1 for the same order, -1 for the reverse. A column none of whose
runs has an accuracy (all collapsed or diverged) has no mean and is left out, and the result says so.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from scipy.stats import spearmanr

import setfuncs as sf

__all__ = ["rank_agreement"]


def rank_agreement(table: Sequence[dict], paper: Mapping[str, Mapping[int, float]], sizes: Sequence[int]
                   ) -> list[dict]:
    r"""For every ``n`` in ``sizes``: ``n``, ``rho`` (:math:`\rho_n` over the columns of
    :data:`~setfuncs.TABLE2_SPECS` with our mean accuracy at every size), ``columns`` (those columns,
    in Table 2's order), ``left_out`` (Table 2's other columns: no run of ours, or no mean at some
    size because every run collapsed or diverged, so that a reader sees over what the correlation
    runs) and ``order`` (``columns`` by our mean accuracy at ``n``, best first).

    ``table``: :func:`~setfuncs.experiments.pointcloud.pointcloud_table` rows; ``paper``:
    :func:`~setfuncs.experiments.pointcloud.paper_rows`.
    """
    ours = {row["spec"]: {n: row[f"mean_{n}"] for n in sizes} for row in table}
    common = [s for s in sf.TABLE2_SPECS if s in ours and all(ours[s][n] is not None for n in sizes)]
    left_out = [s for s in sf.TABLE2_SPECS if s not in common]
    return [{"n": n, "rho": float(spearmanr([ours[s][n] for s in common], [paper[s][n] for s in common]).statistic),
             "columns": list(common), "left_out": list(left_out),
             "order": sorted(common, key=lambda s: -ours[s][n])} for n in sizes]
