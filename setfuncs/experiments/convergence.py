r"""Has a sweep's budget converged? The test metric at every run's checkpoints, per group of runs.

Every run of the shared run protocol (:mod:`~setfuncs.experiments.protocol`) records its test
metric at a few checkpoints, ``learning_curve["test"]`` (``steps`` and ``values``). For a group of
runs (a setting, a column) :func:`checkpoint_curves` gives the median and quartiles over runs at
each checkpoint, and :func:`late_change` asks whether the metric still moves over the last stretch
of training: for each seed :math:`s`, the mean over the group's runs of that seed of the change from
the second-to-last checkpoint to the last,

.. math:: d_s = \pm\,(v_{s,\text{last}} - v_{s,\text{before}}),

signed so that a positive :math:`d_s` is an improvement, tested two-sided by the exact sign test over
seeds (a change against zero: no pairing of configurations makes it symmetric, so the test is of its
median, :func:`~setfuncs.experiments.paired.sign_test`) with one Holm correction over the groups
(:func:`~setfuncs.experiments.findings.judge.compare_pairs`). A
group whose metric is "still improving" has not converged at this budget; "undecided" says the
seeds cannot tell a change from none, not that the group has converged. :func:`loss_curves` gives
the same median and quartiles of the training loss over the learning curve's windows. Runs that diverged,
collapsed or failed, or lack a finite checkpoint, are left out. matplotlib is imported by the axes
a caller passes in, never here.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .findings import Comparison, compare_pairs, interval_text
from .schema import trained_runs


def _ordered_runs(results: dict) -> list[dict]:
    """The trained runs in the order the file declares its configurations, then by seed, whatever order
    they finished in: groups, curves and means are read in this order, so a rerun that finished in
    another order draws and prints the same."""
    order = {spec: i for i, spec in enumerate(results.get("configurations") or [])}
    return sorted(trained_runs(results), key=lambda run: (order.get(run["spec"], len(order)), str(run["spec"]), run["seed"]))

__all__ = ["checkpoints_by_group", "checkpoint_curves", "loss_curves", "late_change", "late_change_lines",
           "plot_checkpoint_curves", "plot_loss_curves"]


def checkpoints_by_group(results: dict, group: str) -> dict[str, list[tuple[int, list[int], np.ndarray]]]:
    """``{group value: [(seed, steps, values), ...]}``: every trained run's test checkpoints with finite
    values, grouped by the run's field ``group`` (e.g. ``"setting"``, ``"spec"``), in the file's order of
    configurations and then seeds, not the order the runs finished in. A ValueError if no
    run records checkpoints (a file written before the shared run protocol recorded them)."""
    out: dict[str, list[tuple[int, list[int], np.ndarray]]] = {}
    for run in _ordered_runs(results):
        test = (run.get("learning_curve") or {}).get("test") or {}
        values = np.asarray(test.get("values") or [], dtype=float)
        if values.size and np.isfinite(values).all():
            out.setdefault(str(run[group]), []).append((run["seed"], list(test["steps"]), values))
    if not out:
        raise ValueError("no run of these results records test checkpoints (learning_curve.test): the file "
                         "was written before the shared run protocol recorded them; rerun the sweep")
    return out


def checkpoint_curves(results: dict, group: str) -> dict[str, dict[str, Any]]:
    """Per group: ``steps``, and the ``median``, ``q25`` and ``q75`` over its runs of the test metric at
    each checkpoint, and ``runs``. A ValueError names a group whose runs disagree on the steps."""
    return _quantiles({name: [(steps, values) for _, steps, values in runs]
                       for name, runs in checkpoints_by_group(results, group).items()},
                      group, "were checked at different steps")


def _quantiles(by_group: dict[str, list[tuple[list[int], np.ndarray]]], group: str,
               disagree: str) -> dict[str, dict[str, Any]]:
    """Per group of runs ``(steps, values)``: ``steps``, and the median and quartiles over the runs
    at each step, and ``runs``. A ValueError, saying the group's runs ``disagree``, if their steps
    differ (they belong to different budgets)."""
    curves = {}
    for name, runs in by_group.items():
        steps = runs[0][0]
        if any(r[0] != steps for r in runs):
            raise ValueError(f"the runs of {group} {name!r} {disagree}; they belong to different budgets")
        q25, median, q75 = np.quantile(np.stack([r[1] for r in runs]), [0.25, 0.5, 0.75], axis=0)
        curves[name] = {"steps": steps, "median": median, "q25": q25, "q75": q75, "runs": len(runs)}
    return curves


def loss_curves(results: dict, group: str) -> dict[str, dict[str, Any]]:
    """Per group (the runs' field ``group``): ``steps``, and the ``median``, ``q25`` and ``q75`` over
    its trained runs of the training loss in the learning curve's windows
    (:func:`~setfuncs.experiments.protocol.learning_curve`: the mean loss of each window, ``steps``
    its end), and ``runs``. A ValueError if no run records a learning curve, or names a group whose
    runs disagree on the windows (they belong to different budgets)."""
    by_group: dict[str, list[tuple[list[int], np.ndarray]]] = {}
    for run in _ordered_runs(results):
        curve = run.get("learning_curve") or {}
        if curve.get("loss"):
            by_group.setdefault(str(run[group]), []).append((list(curve["steps"]), np.asarray(curve["loss"], dtype=float)))
    if not by_group:
        raise ValueError("no run of these results records a learning curve: the file was written before the shared "
                         "run protocol recorded them; rerun the sweep")
    return _quantiles(by_group, group, "record their losses over different windows")


def late_change(results: dict, group: str, higher_is_better: bool) -> list[dict]:
    """Per group with runs of at least two seeds: the change over the last checkpoint interval, paired by
    seed (see the module); the rows of :func:`~setfuncs.experiments.findings.judge.compare_pairs` with
    ``label`` the group and ``better`` one of "still improving", "getting worse", "undecided"."""
    sign = 1.0 if higher_is_better else -1.0
    comparisons = {}
    for name, runs in checkpoints_by_group(results, group).items():
        by_seed: dict[int, list[float]] = {}
        for seed, _, values in runs:
            if values.size >= 2:
                by_seed.setdefault(seed, []).append(sign * float(values[-1] - values[-2]))
        if len(by_seed) >= 2:
            seeds = sorted(by_seed)
            comparisons[name] = Comparison(name, tuple(seeds), np.array([np.mean(by_seed[s]) for s in seeds]))
    return compare_pairs(comparisons, ("still improving", "getting worse"), test="sign")


def late_change_lines(results: dict, group: str, metric: str, higher_is_better: bool,
                      noun: str | None = None) -> list[str]:
    """What a chapter prints under its learning curves: per group of :func:`late_change`, the median
    ``metric`` at the last two checkpoints, the median over seeds of the change with its 95 % interval
    (:func:`~setfuncs.experiments.findings.text.interval_text`: of no width where the seeds at its ends tie), the
    Holm-adjusted p-value and the verdict; then a line counting the groups still improving at the
    file's budget (one line saying so where no group has runs of two seeds), and one naming the groups
    of the file left untested, with the seeds their checkpoints come from (fewer than two: runs that
    collapsed, diverged or failed have none), so that the count's denominator is explained. ``noun``
    names a group in those lines ("column": "3 of 12 columns"); the field ``group`` by default."""
    noun = noun or group
    rows = late_change(results, group, higher_is_better)
    if not rows:
        return [f"no {noun} has checkpoints from two seeds: these runs cannot tell whether the {metric} still moves"]
    seeds_of = {name: len({seed for seed, _, _ in runs}) for name, runs in checkpoints_by_group(results, group).items()}
    untested = sorted({str(run[group]) for run in results["runs"]} - {row["label"] for row in rows})
    curves = checkpoint_curves(results, group)
    width = max(len(row["label"]) for row in rows)
    lines = []
    for row in rows:
        curve = curves[row["label"]]
        (before, last), (m_before, m_last) = curve["steps"][-2:], curve["median"][-2:]
        lines.append(f"{row['label']:{width}s} {metric}, step {before:,} -> {last:,}: median {m_before:.4g} -> "
                     f"{m_last:.4g}; median improvement over seeds {row['estimate']:.3g}, 95 % interval "
                     f"{interval_text(row['low'], row['high'], test=row['test'])} ({row['seeds']} seeds), Holm-adjusted p "
                     f"{row['adjusted']:.3g}: {row['better']}")
    still = [row["label"] for row in rows if row["better"] == "still improving"]
    lines.append(f"-> still improving at the end of the {results['budget']} budget: {len(still)} of {len(rows)} "
                 f"{noun}s" + (f" ({', '.join(still)})" if still else ""))
    if untested:
        counts = [seeds_of.get(name, 0) for name in untested]
        lines.append("   not tested, with test checkpoints from fewer than two seeds (runs that collapsed, diverged "
                     "or failed record none that count): " + ", ".join(
                         f"{name} ({n} seed{'s' * (n != 1)})" for name, n in zip(untested, counts)))
    return lines


def _legend(name: str, curve: dict[str, Any]) -> str:
    """A group's legend entry: its name and how many runs its median is over ("1 run", "9 runs")."""
    return f"{name} ({curve['runs']} run{'s' * (curve['runs'] != 1)})"


def plot_checkpoint_curves(ax: Any, curves: dict[str, dict[str, Any]], metric: str,
                           styles: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """The median test metric of each group against the step, with its interquartile band, on ``ax``
    (matplotlib axes); ``styles[name]``, where given, are the keyword arguments of a group's line
    (its colour, line style, marker: a chapter's colours for its configurations)."""
    for name, curve in curves.items():
        style = {"marker": "o", **(styles or {}).get(name, {})}
        line, = ax.plot(curve["steps"], curve["median"], label=_legend(name, curve), **style)
        ax.fill_between(curve["steps"], curve["q25"], curve["q75"], color=line.get_color(), alpha=0.2)
    ax.set_xlabel("training step")
    ax.set_ylabel(f"{metric} (median, quartiles over runs)")
    ax.legend()


def plot_loss_curves(ax: Any, curves: dict[str, dict[str, Any]], quantity: str = "training loss",
                     log: bool = True, styles: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """The median training loss of each group (:func:`loss_curves`) against the step, with its
    interquartile band, on ``ax`` (matplotlib axes), on a log scale (``log=False``: a linear one, for
    a loss that can be negative, such as a negative log-likelihood; a log scale refuses one);
    ``styles[name]``, where given, are the keyword arguments of a group's line."""
    if log and any((curve["q25"] <= 0).any() for curve in curves.values()):
        raise ValueError(f"plot_loss_curves: the {quantity} is not positive everywhere, so a log scale cannot show "
                         "it; pass log=False")
    for name, curve in curves.items():
        line, = ax.plot(curve["steps"], curve["median"], label=_legend(name, curve),
                        **(styles or {}).get(name, {}))
        ax.fill_between(curve["steps"], curve["q25"], curve["q75"], color=line.get_color(), alpha=0.2)
    ax.set_xlabel("training step")
    ax.set_ylabel(f"{quantity} (median, quartiles over runs)")
    if log:
        ax.set_yscale("log")
    ax.legend()
