r"""Table 2 of the paper from a sweep's results file (:meth:`~setfuncs.experiments.experiment.Experiment.sweep`).

For every column (model spec) and every row (population size :math:`n \in \{1000, 100, 50\}`):
the **mean** test accuracy over the column's finished runs (seeds) and the **best** run's
accuracy (the largest over seeds, at each size separately), next to the paper's number. Our
accuracies come from the data set named in the results file (the offline shapes or ModelNet40);
the paper's are ModelNet40's, so only the pattern across columns and rows compares across data
sets. Runs whose training diverged (``error`` set) or collapsed are counted but have no accuracy,
nor has a run at a size where its accuracy is not a finite number
(:func:`~setfuncs.experiments.peaks.finite_metric`). Rows are plain dicts; accuracies are fractions
in [0, 1] and printed as percentages.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

import setfuncs as sf
from setfuncs.tables import text_table

from ..peaks import finite_metric
from ..results import load_paper, sorted_runs
from ..schema import finished_runs, status_counts
from .budget import TABLE_SIZES

__all__ = ["paper_rows", "accuracy_at", "column_runs", "pointcloud_table", "accuracy_curves",
           "mean_note", "data_label", "format_table"]



def paper_rows(path: str | os.PathLike) -> dict[str, dict[int, float]]:
    """The paper's Table 2 from its ``results/paper-results.json``: ``{spec: {1000: accuracy, 100: ..., 50: ...}}``
    with accuracies as fractions and specs in our spelling (``"max/r-LSE"`` -> ``"max/r-lse"``)."""
    table = load_paper(path)["modelnet40"]
    specs = [column.lower() for column in table["columns"]]
    return {spec: {int(n): table["rows"][n][j] / 100 for n in table["rows"]} for j, spec in enumerate(specs)}


def accuracy_at(run: dict, n: int) -> float | None:
    """A run's test accuracy at population size ``n``; None for a run that diverged or collapsed, a
    size it was not tested at, or an accuracy that is not finite
    (:func:`~setfuncs.experiments.peaks.finite_metric`)."""
    return finite_metric(run, "accuracy_by_population_size", n)


def column_runs(results: dict, spec: str) -> list[dict]:
    """The finished runs of one column (:func:`~setfuncs.experiments.schema.finished_runs`: engine
    failures, which a later sitting reruns, are not runs) in seed order, whatever order they finished
    in (:func:`~setfuncs.experiments.results.sorted_runs`): a mean over them sums in that order."""
    return [r for r in sorted_runs(finished_runs(results)) if r["spec"] == spec]


def pointcloud_table(results: dict, paper: str | os.PathLike | None = None) -> list[dict]:
    """One row per column that has runs: Table 2's in the paper's order, then the others (the
    log-mean-exp columns).

    Keys: ``spec, runs, diverged, collapsed``, and for every ``n`` in (1000, 100, 50): ``mean_<n>``
    (over runs that neither diverged nor collapsed), ``best_<n>`` (their largest) and, with
    ``paper`` (its ``results/paper-results.json``), ``paper_<n>``.
    """
    theirs = paper_rows(paper) if paper is not None else {}
    specs = {r["spec"] for r in finished_runs(results)}
    known = [s for s in sf.TABLE2_SPECS if s in specs]
    rows = []
    for spec in known + sorted(specs - set(known)):
        runs = column_runs(results, spec)
        counts = status_counts(runs)
        row: dict = {"spec": spec, "runs": len(runs), "diverged": counts["diverged"], "collapsed": counts["collapsed"]}
        for n in TABLE_SIZES:
            values = [v for v in (accuracy_at(r, n) for r in runs) if v is not None]
            row[f"mean_{n}"] = float(np.mean(values)) if values else None
            row[f"best_{n}"] = float(np.max(values)) if values else None
            row[f"paper_{n}"] = theirs.get(spec, {}).get(n)
        rows.append(row)
    return rows


def accuracy_curves(results: dict) -> list[dict]:
    """For every column with a run that has an accuracy: ``spec, sizes`` (ascending), ``mean`` accuracy
    at each size over those runs, ``runs`` (how many) and ``of`` (the column's finished runs, those
    that collapsed or diverged included), so that a figure can say when a mean leaves runs out."""
    curves = []
    for row in pointcloud_table(results):
        runs = [r for r in column_runs(results, row["spec"]) if accuracy_at(r, TABLE_SIZES[0]) is not None]
        if not runs:
            continue
        sizes = sorted(int(n) for n in runs[0]["accuracy_by_population_size"])
        curves.append({"spec": row["spec"], "sizes": sizes, "runs": len(runs), "of": row["runs"],
                       "mean": [float(np.mean([accuracy_at(r, n) for r in runs])) for n in sizes]})
    return curves


def mean_note(curve: dict) -> str:
    """What a curve of :func:`accuracy_curves` leaves out: ``""``, or ``"mean of 1 of 3 runs"`` when some
    of the column's runs collapsed or diverged (a figure's legend and the ``table`` command show it)."""
    runs, of = curve.get("runs"), curve.get("of")
    return "" if runs is None or runs == of else f"mean of {runs} of {of} runs"


def data_label(results: dict) -> str:
    """Which clouds a results file's accuracies come from, e.g. ``"offline shapes (12 classes, ...)"``."""
    data = results.get("data", {})
    name = {"shapes": "the offline shapes", "modelnet40": "ModelNet40"}.get(data.get("name"), "unknown data")
    seeds = results.get("runs_per_configuration")
    return (f"{name} ({data.get('classes')} classes, {data.get('train_clouds')} training and "
            f"{data.get('test_clouds')} test clouds), budget {results.get('budget')}, "
            f"{seeds} seed{'' if seeds == 1 else 's'} per column")


def format_table(rows: Sequence[dict]) -> str:
    """A fixed-width text rendering of :func:`pointcloud_table` rows, accuracies in percent."""
    columns = [("spec", "column", "{:<13}"), ("runs", "runs", "{:>5}"), ("collapsed", "coll.", "{:>6}")]
    for kind, title in (("mean", "mean"), ("best", "best"), ("paper", "paper")):
        columns += [(f"{kind}_{n}", f"{title} {n}", "{:>11.1%}") for n in TABLE_SIZES]
    return text_table(rows, columns)
