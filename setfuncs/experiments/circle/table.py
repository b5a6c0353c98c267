r"""Table 1 of the paper from a sweep's results file (:meth:`~setfuncs.experiments.experiment.Experiment.sweep`).

For each of the four settings (equivariant / final aggregation, plain or recurrent), over all its
runs (the paper: 20 seeds x 9 aggregation combinations = 180):

* **best MSE**: the smallest test MSE of any run, with that run's radius MSE and centre MSE;
* **median best MSE**: the paper's bootstrap estimate of the peak performance of a study of
  ``batch_size`` runs: draw ``bootstraps`` batches of ``batch_size`` runs with replacement from
  all runs of the setting, record the best MSE of each batch, report the median;
* both as ratios to the ``plain/plain`` row, so that our rows compare with the paper's even though
  the absolute MSEs depend on the paper's unknown data scale.

``variant="paper"`` pools the paper's nine combinations of ``{mean, max, lse}``;
``variant="lme"`` the nine of ``{mean, max, lme}`` (log-mean-exp in place of LSE; the four
mean/max combinations are in both). Runs whose training diverged (``error`` set), runs that
collapsed to a constant (``collapsed``) and runs whose MSE is not a finite number are counted but
left out of the best and median best MSE (:func:`~setfuncs.experiments.peaks.finite_metric`). Rows
are lists of plain dicts (no pandas).
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from setfuncs.tables import text_table

from ..peaks import check_batches, finite_metric, median_peak
from ..results import load_paper, sorted_runs
from ..schema import finished_runs, status_counts
from ..sweeps import SETTINGS, VARIANTS, in_variant

__all__ = ["PAPER_ROWS", "paper_rows", "usable_runs", "median_best", "circle_table",
           "by_population_size", "format_table"]

#: Our setting names -> the row names in the paper's ``results/paper-results.json``.
PAPER_ROWS = {
    "plain/plain": "plain equivariant / plain aggregation",
    "plain/recurrent": "plain equivariant / recurrent aggregation",
    "recurrent/plain": "recurrent equivariant / plain aggregation",
    "recurrent/recurrent": "recurrent equivariant / recurrent aggregation",
}



def paper_rows(path: str | os.PathLike) -> dict[str, dict[str, float]]:
    """The paper's Table 1 from its ``results/paper-results.json``: ``{setting: {best_mse, radius_mse, ...}}``."""
    table = load_paper(path)["minimal_enclosing_circle"]
    columns = table["columns"]
    return {setting: dict(zip(columns, table["rows"][name])) for setting, name in PAPER_ROWS.items()}


def usable_runs(results: dict, setting: str, variant: str = "paper") -> tuple[list[dict], list[dict]]:
    """The runs of ``setting`` in ``variant``'s grid: the trained ones with a finite MSE, and all
    finished ones (:func:`~setfuncs.experiments.schema.finished_runs`: engine failures, which a later
    sitting reruns, are not runs), both by configuration and seed
    (:func:`~setfuncs.experiments.results.sorted_runs`), not in the order they finished in."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {list(VARIANTS)}, got {variant!r}")
    runs = [r for r in sorted_runs(finished_runs(results)) if r["setting"] == setting and in_variant(r, variant)]
    return [r for r in runs if finite_metric(r, "mse") is not None], runs


def median_best(mse: np.ndarray, batch_size: int, bootstraps: int, seed: int) -> float:
    """The paper's median best MSE: the median over ``bootstraps`` batches of ``batch_size`` runs
    (drawn with replacement, ``numpy.random.default_rng(seed)``) of each batch's smallest MSE
    (:func:`~setfuncs.experiments.peaks.median_peak`)."""
    return median_peak(mse, batch_size, bootstraps, seed)


def circle_table(results: dict, batch_size: int = 20, bootstraps: int = 1000, seed: int = 0,
                 paper: str | os.PathLike | None = None, variant: str = "paper") -> list[dict]:
    """One row per setting with runs (in :data:`~setfuncs.experiments.sweeps.SETTINGS` order).

    Keys: ``setting, runs, diverged, collapsed, best_mse, radius_mse, center_mse, best_spec, best_seed,
    median_best_mse, best_mse_ratio, median_best_mse_ratio`` (ratios to ``plain/plain``, None if
    that row is missing) and, with ``paper`` (the path of the paper's ``results/paper-results.json``),
    ``paper_best_mse, paper_radius_mse, paper_center_mse, paper_median_best_mse`` and the paper's
    two ratios. Every setting uses its own bootstrap generator seeded with ``seed``, drawing from its
    runs by configuration and seed (:func:`usable_runs`), so that the order of the runs in the file
    does not move a number; of tied best runs the first in that order is the best.
    """
    check_batches(batch_size, bootstraps)
    rows = []
    for setting in SETTINGS:
        runs, every = usable_runs(results, setting, variant)
        if not runs:
            continue
        mse = np.array([r["mse"] for r in runs], dtype=float)
        best = runs[int(mse.argmin())]
        counts = status_counts(every)
        rows.append({"setting": setting, "runs": len(every), "diverged": counts["diverged"],
                     "collapsed": counts["collapsed"],
                     "best_mse": best["mse"], "radius_mse": best["radius_mse"],
                     "center_mse": best["center_mse"], "best_spec": best["spec"],
                     "best_seed": best["seed"],
                     "median_best_mse": median_best(mse, batch_size, bootstraps, seed)})
    paper_table = paper_rows(paper) if paper is not None else None
    base = next((r for r in rows if r["setting"] == "plain/plain"), None)
    for row in rows:
        for key in ("best_mse", "median_best_mse"):
            row[f"{key}_ratio"] = row[key] / base[key] if base else None
        if paper_table is not None:
            theirs, their_base = paper_table[row["setting"]], paper_table["plain/plain"]
            for key in ("best_mse", "radius_mse", "center_mse", "median_best_mse"):
                row[f"paper_{key}"] = theirs[key]
            for key in ("best_mse", "median_best_mse"):
                row[f"paper_{key}_ratio"] = theirs[key] / their_base[key]
    return rows


def by_population_size(results: dict, variant: str = "paper") -> list[dict]:
    """For each setting, its best run (by MSE at ``N = 20``, of the runs :func:`usable_runs` keeps)
    evaluated at every test size.

    Keys: ``setting, spec, seed, sizes`` (ascending ``N``) and ``mse`` (one per size).
    """
    rows = []
    for setting in SETTINGS:
        runs, _ = usable_runs(results, setting, variant)
        if not runs:
            continue
        best = min(runs, key=lambda r: r["mse"])
        sizes = sorted(int(n) for n in best["mse_by_population_size"])
        rows.append({"setting": setting, "spec": best["spec"], "seed": best["seed"], "sizes": sizes,
                     "mse": [best["mse_by_population_size"][str(n)] for n in sizes]})
    return rows


def format_table(rows: Sequence[dict]) -> str:
    """A fixed-width text rendering of :func:`circle_table` rows (with the paper's if present)."""
    columns = [("setting", "equiv./final", "{:<20}"), ("runs", "runs", "{:>5}"), ("collapsed", "coll.", "{:>6}"),
               ("best_mse", "best MSE", "{:>9.3f}"), ("radius_mse", "radius", "{:>8.3f}"),
               ("center_mse", "centre", "{:>8.3f}"), ("median_best_mse", "median best", "{:>12.3f}"),
               ("best_mse_ratio", "best/pp", "{:>8.2f}"), ("median_best_mse_ratio", "median/pp", "{:>10.2f}"),
               ("best_spec", "  best spec", "  {:<12}")]
    if rows and "paper_best_mse" in rows[0]:
        columns += [("paper_best_mse", "paper best", "{:>11.2f}"),
                    ("paper_median_best_mse", "paper median", "{:>13.2f}"),
                    ("paper_best_mse_ratio", "best/pp", "{:>8.2f}"),
                    ("paper_median_best_mse_ratio", "median/pp", "{:>10.2f}")]
    return text_table(rows, columns)
