r"""Figure 4b of the paper from a sweep's results file (:meth:`~setfuncs.experiments.experiment.Experiment.sweep`).

**Peak performance** (the paper's violins). Group the runs by one aggregation of the model, either
the aggregation inside the equivariant layers (``by="equivariant"``, the figure's top row) or the
final one (``by="final"``, bottom row): for each family ``mean, max, lse`` and each kind, plain
(e.g. ``lse``) or learnable (recurrent, e.g. ``r-lse``), pool the runs of every configuration that
uses it (over the other aggregation and its kind). From the pooled per-run metrics :math:`m`
(the median metric over the test populations at ``n = 100``), draw ``bootstraps`` batches of
``batch_size = 5`` runs with replacement and record each batch's best (lowest) metric:

.. math:: \text{peak}_b = \min_{j \in \text{batch}_b} m_j, \qquad b = 1, \dots, \text{bootstraps}.

The violins show the distribution of :math:`\text{peak}_b`; negative means EM is outperformed.
``variant="paper"`` uses the paper's grid of ``{mean, max, lse}``, ``variant="lme"`` the grid with
log-mean-exp in place of LSE. Runs whose training diverged (``metric`` None), that collapsed to
a constant (``collapsed``) or whose metric is not a finite number are counted but not drawn, and
never a best run (:func:`~setfuncs.experiments.peaks.finite_metric`). Rows are plain dicts.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from setfuncs.tables import text_table

from ..peaks import batch_peaks, check_batches, finite_metric
from ..results import load_paper, sorted_runs
from ..schema import finished_runs, status_counts
from ..sweeps import SETTINGS, VARIANTS, in_variant

__all__ = ["GROUPINGS", "paper_findings", "variant_runs", "peak_performance", "batch_peaks",
           "mixture_table", "by_population_size", "format_table"]

#: How runs can be grouped for the violins, by the equivariant or by the final aggregation.
GROUPINGS = ("equivariant", "final")



def paper_findings(path: str | os.PathLike) -> list[str]:
    """The paper's qualitative findings for Figure 4 from its ``results/paper-results.json``."""
    return list(load_paper(path)["gmm_mixture_weights"]["findings"])


def _metric(run: dict, size: int | None) -> float | None:
    """The run's finite metric at ``size`` (None: its ``metric``, at ``n = 100``), or None."""
    return finite_metric(run, "metric") if size is None else finite_metric(run, "metric_by_population_size", size)


def _is_learnable(run: dict, by: str) -> bool:
    equivariant, final = run["setting"].split("/")
    return (equivariant if by == "equivariant" else final) == "recurrent"


def variant_runs(results: dict, variant: str = "paper") -> list[dict]:
    """The finished runs (:func:`~setfuncs.experiments.schema.finished_runs`: engine failures are not
    runs) of ``variant``'s 3 x 3 grid in all four settings, by configuration and seed
    (:func:`~setfuncs.experiments.results.sorted_runs`), not in the order they finished in: the
    violins' batches are drawn from them in this order."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {list(VARIANTS)}, got {variant!r}")
    return [r for r in sorted_runs(finished_runs(results)) if in_variant(r, variant)]


def peak_performance(results: dict, by: str = "equivariant", batch_size: int = 5,
                     bootstraps: int = 1000, seed: int = 0, size: int | None = None,
                     variant: str = "paper") -> list[dict]:
    """The peak-performance distribution of every aggregation group (one violin each).

    Args:
        results: a sweep's results (:meth:`~setfuncs.experiments.experiment.Experiment.load_results`).
        by: ``"equivariant"`` (group by the equivariant layers' aggregation) or ``"final"``.
        batch_size: runs per bootstrap batch (the paper: 5).
        bootstraps: bootstrap batches per group.
        seed: every group draws its batches with ``numpy.random.default_rng(seed)``.
        size: the population size of the metric; None: the per-run ``metric`` (``n = 100``).
        variant: ``"paper"`` or ``"lme"`` (:data:`~setfuncs.experiments.sweeps.VARIANTS`).

    Returns one dict per group with runs, in the order ``mean, r-mean, max, r-max, lse, r-lse``
    (``lme, r-lme`` for the lme variant): ``by, family, learnable, label, runs, diverged,
    collapsed, metrics`` (the finite metrics of the runs that neither diverged nor collapsed, an
    array) and ``peaks`` (``[bootstraps]``, the best metric of each batch,
    :func:`~setfuncs.experiments.peaks.batch_peaks`; empty when no run of the group has a metric:
    such a group is kept, never hidden).
    """
    if by not in GROUPINGS:
        raise ValueError(f"by must be one of {GROUPINGS}, got {by!r}")
    check_batches(batch_size, bootstraps)
    groups = []
    every = variant_runs(results, variant)
    for family in VARIANTS[variant]:
        for learnable in (False, True):
            runs = [r for r in every if r[by] == family and _is_learnable(r, by) == learnable]
            values = [_metric(r, size) for r in runs]
            metrics = np.array([v for v in values if v is not None], dtype=float)
            if not runs:
                continue
            counts = status_counts(runs)
            groups.append({"by": by, "family": family, "learnable": learnable,
                           "label": f"{'r-' if learnable else ''}{family}", "runs": len(runs),
                           "diverged": counts["diverged"], "collapsed": counts["collapsed"], "metrics": metrics,
                           "peaks": batch_peaks(metrics, batch_size, bootstraps, seed) if metrics.size
                           else np.empty(0)})
    return groups


def mixture_table(results: dict, batch_size: int = 5, bootstraps: int = 1000,
                  seed: int = 0, variant: str = "paper") -> list[dict]:
    """One row per violin, both groupings (``equivariant`` rows first).

    Keys: ``by, label, runs, diverged, collapsed, median_peak, q05_peak, q95_peak`` (of the peak
    distribution), ``peaks_worse_than_em`` (the fraction of peaks above 0), ``median_metric``
    (over runs), ``best_metric, best_spec, best_seed`` (the best single run). A group with no run
    that has a finite metric has a row with None in every statistic.
    """
    rows = []
    every = variant_runs(results, variant)
    for by in GROUPINGS:
        for group in peak_performance(results, by, batch_size, bootstraps, seed, variant=variant):
            finished = [r for r in every
                        if r[by] == group["family"] and _is_learnable(r, by) == group["learnable"]
                        and _metric(r, None) is not None]
            row = {"by": by, "label": group["label"], "runs": group["runs"],
                   "diverged": group["diverged"], "collapsed": group["collapsed"]}
            if not finished:
                rows.append({**row, **dict.fromkeys(("median_peak", "q05_peak", "q95_peak", "peaks_worse_than_em",
                                                     "median_metric", "best_metric", "best_spec", "best_seed"))})
                continue
            best = min(finished, key=lambda r: r["metric"])
            peaks = group["peaks"]
            rows.append({**row,
                         "median_peak": float(np.median(peaks)),
                         "q05_peak": float(np.quantile(peaks, 0.05)),
                         "q95_peak": float(np.quantile(peaks, 0.95)),
                         "peaks_worse_than_em": float(np.mean(peaks > 0)),
                         "median_metric": float(np.median(group["metrics"])),
                         "best_metric": best["metric"], "best_spec": best["spec"],
                         "best_seed": best["seed"]})
    return rows


def by_population_size(results: dict, variant: str = "paper") -> list[dict]:
    """For each setting, the metric at every test size: the median over its runs and its best run's.

    Keys: ``setting, sizes`` (ascending), ``median`` (one per size, over the runs that neither
    diverged nor collapsed and have a finite ``metric``), ``best_spec, best_seed, best`` (of those
    runs, the one with the lowest ``metric``, at every size).
    """
    rows = []
    for setting in SETTINGS:
        runs = [r for r in variant_runs(results, variant) if r["setting"] == setting and _metric(r, None) is not None]
        if not runs:
            continue
        sizes = sorted(int(n) for n in runs[0]["metric_by_population_size"])
        best = min(runs, key=lambda r: r["metric"])
        rows.append({"setting": setting, "sizes": sizes,
                     "median": [float(np.median([r["metric_by_population_size"][str(n)] for r in runs]))
                                for n in sizes],
                     "best_spec": best["spec"], "best_seed": best["seed"],
                     "best": [best["metric_by_population_size"][str(n)] for n in sizes]})
    return rows


def format_table(rows: Sequence[dict]) -> str:
    """A fixed-width text rendering of :func:`mixture_table` rows."""
    columns = [("by", "grouped by", "{:<12}"), ("label", "agg.", "{:<7}"), ("runs", "runs", "{:>5}"),
               ("collapsed", "coll.", "{:>6}"),
               ("median_peak", "median peak", "{:>12.3g}"), ("q05_peak", "5%", "{:>10.3g}"),
               ("q95_peak", "95%", "{:>10.3g}"), ("peaks_worse_than_em", "peaks>0", "{:>8.0%}"),
               ("median_metric", "median run", "{:>11.3g}"), ("best_metric", "best run", "{:>10.3g}"),
               ("best_spec", "  best spec", "  {:<12}")]
    return text_table(rows, columns)
