"""Chapter 10's analysis and figures: confusion matrices, the cost table, the rank agreement with
the paper, and the figures of clouds and accuracies."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from scipy.stats import spearmanr
from sklearn.metrics import confusion_matrix as sklearn_confusion

import setfuncs as sf
from setfuncs.experiments import pointcloud as pc
from setfuncs.experiments.pointcloud.agreement import rank_agreement
from setfuncs.experiments.pointcloud.confusion import confusion_at_size, confusion_matrix, top_confusions
from setfuncs.experiments.pointcloud.costs import cost_table, throughput_spread
from setfuncs.experiments.pointcloud.figures import (column_style, draw_accuracy_by_size, plot_against_paper,
                                                     plot_clouds, plot_confusions, plot_learning_curves,
                                                     plot_preprocessing)


def test_confusion_matrix_counts_label_pairs() -> None:
    rng = np.random.default_rng(0)
    true, predicted = rng.integers(0, 5, 200), rng.integers(0, 5, 200)
    matrix = confusion_matrix(true, predicted, 5)
    np.testing.assert_array_equal(matrix, sklearn_confusion(true, predicted, labels=range(5)))
    np.testing.assert_array_equal(matrix.sum(1), np.bincount(true, minlength=5))
    with pytest.raises(ValueError, match="label vectors of one length"):
        confusion_matrix(true, predicted[:-1], 5)


def test_confusion_at_size_agrees_with_the_accuracy() -> None:
    clouds, labels, names = pc.synthetic_shapes(2, "test", points=120, seed=0)
    torch.manual_seed(0)
    model = pc.make_model("max/max", len(names), pc.QUICK)
    fractions = confusion_at_size(model, clouds, labels, 50, len(names))
    np.testing.assert_allclose(fractions.sum(1), 1.0)
    counts = np.bincount(labels, minlength=len(names))
    assert (np.diag(fractions) * counts).sum() / counts.sum() == pytest.approx(pc.accuracy(model, clouds, labels, 50))


def test_top_confusions_are_the_largest_off_diagonal_entries() -> None:
    fractions = np.array([[0.5, 0.4, 0.1], [0.0, 0.9, 0.1], [0.3, 0.2, 0.5]])
    assert top_confusions(fractions, ["a", "b", "c"], 2) == [(0.4, "a", "b"), (0.3, "c", "a")]
    assert fractions[0, 0] == 0.5                              # the input keeps its diagonal


def synthetic_results() -> dict:
    rng = np.random.default_rng(1)
    sizes = [10, 100, 1000, 2000]
    runs = []
    for spec in pc.COLUMNS[:4]:
        for seed in range(3):
            runs.append({"spec": spec, "seed": seed, "error": None, "collapsed": False,
                         "parameters": 1000 + len(spec),
                         "accuracy_by_population_size": {str(n): float(rng.uniform()) for n in sizes},
                         "clouds_per_second": float(rng.uniform(100, 200)),
                         "train_seconds": float(rng.uniform(10, 20))})
    runs[0]["collapsed"] = True
    runs[1].update(error="diverged", clouds_per_second=1.0)
    runs.append({"spec": pc.COLUMNS[0], "seed": 9, "failure": "engine"})
    return {"runs": runs, "budget_parameters": {"points": 1000}, "evaluation": {"sizes": sizes}}


def test_cost_table_equals_a_direct_computation() -> None:
    """Accuracies over the runs that trained and did not collapse; costs over every run that trained
    to the end, collapsed or not (it paid for its training); a column whose every run collapsed keeps
    its row, with its costs and no accuracy."""
    results = synthetic_results()
    rows = cost_table(results)
    assert [row["spec"] for row in rows] == list(pc.COLUMNS[:4])
    for row in rows:
        ended = [r for r in results["runs"] if r["spec"] == row["spec"] and "failure" not in r and r["error"] is None]
        runs = [r for r in ended if not r["collapsed"]]
        accuracy = np.array([[r["accuracy_by_population_size"][str(n)] for n in (10, 1000, 2000)] for r in runs])
        assert row["runs"] == len(ended) and row["collapsed"] == len(ended) - len(runs)
        assert row["parameters"] == 1000 + len(row["spec"])
        assert row["acc_train"] == pytest.approx(accuracy[:, 1].mean())
        spread = accuracy[:, 1].max() - accuracy[:, 1].min()
        assert row["spread"] == (pytest.approx(spread) if len(runs) > 1 else None)
        assert row["gain_top"] == pytest.approx(accuracy[:, 2].mean() - accuracy[:, 1].mean())
        assert row["acc_10"] == pytest.approx(accuracy[:, 0].mean())
        assert row["throughput"] == np.median([r["clouds_per_second"] for r in ended])
        assert row["seconds"] == np.median([r["train_seconds"] for r in ended])
    assert rows[0]["runs"] == 2 and rows[0]["collapsed"] == 1 and rows[0]["spread"] is None   # one of each, one diverged
    for run in results["runs"]:
        if run["spec"] == pc.COLUMNS[1] and run["error"] is None:
            run["collapsed"] = True
    every = next(row for row in cost_table(results) if row["spec"] == pc.COLUMNS[1])
    assert every["runs"] == every["collapsed"] > 0 and every["seconds"] > 0
    assert every["acc_train"] is every["spread"] is every["gain_top"] is every["acc_10"] is None


def test_throughput_spread_is_the_largest_ratio_within_a_column() -> None:
    results = synthetic_results()
    speeds = {}
    for r in results["runs"]:
        if "failure" not in r and r["error"] is None:
            speeds.setdefault(r["spec"], []).append(r["clouds_per_second"])
    assert throughput_spread(results) == pytest.approx(max(max(v) / min(v) for v in speeds.values()))


def test_rank_agreement_is_spearman_over_the_shared_columns() -> None:
    specs = sf.TABLE2_SPECS[:5]
    rng = np.random.default_rng(2)
    table = [{"spec": s, "mean_50": float(rng.uniform()), "mean_1000": float(rng.uniform())} for s in specs]
    table.append({"spec": sf.TABLE2_SPECS[5], "mean_50": None, "mean_1000": 0.5})   # not at every size: left out
    paper = {s: {50: float(rng.uniform()), 1000: row["mean_1000"]} for s, row in zip(specs, table)}
    rows = rank_agreement(table, paper, (1000, 50))
    assert rows[0]["rho"] == pytest.approx(1.0)                 # the same numbers, so the same order
    expected = spearmanr([row["mean_50"] for row in table[:5]], [paper[s][50] for s in specs]).statistic
    assert rows[1]["rho"] == pytest.approx(expected)
    assert rows[1]["order"] == sorted(specs, key=lambda s: -next(r["mean_50"] for r in table if r["spec"] == s))


def test_rank_agreement_says_which_columns_it_left_out() -> None:
    """A column with no mean at some size (every run collapsed) and the columns without runs are named,
    and the correlation runs over the others only."""
    specs = sf.TABLE2_SPECS[:4]
    table = [{"spec": s, "mean_50": 0.1 * (i + 1), "mean_1000": 0.2 * (i + 1)} for i, s in enumerate(specs)]
    collapsed = sf.TABLE2_SPECS[4]
    table.append({"spec": collapsed, "mean_50": None, "mean_1000": None})
    paper = {s: {50: 0.1 * (i + 1), 1000: 1 - 0.1 * i} for i, s in enumerate(sf.TABLE2_SPECS)}
    rows = rank_agreement(table, paper, (1000, 50))
    for row in rows:
        assert row["columns"] == list(specs)
        assert row["left_out"] == [s for s in sf.TABLE2_SPECS if s not in specs]
        assert collapsed in row["left_out"] and not set(row["columns"]) & set(row["left_out"])
    assert rows[0]["rho"] == pytest.approx(-1.0) and rows[1]["rho"] == pytest.approx(1.0)


def test_figures_draw_what_they_are_given() -> None:
    clouds, labels, names = pc.synthetic_shapes(1, "train", points=100, seed=0)
    fig = plot_clouds(clouds, labels, names)
    assert len(fig.axes) == 12 and fig.axes[0].get_title() == names[labels[0]]
    fig = plot_preprocessing([("a", [clouds[0]]), ("b", [clouds[1], clouds[2]])], "t")
    assert fig.axes[1].collections and len(fig.axes) == 4

    fig, ax = plt.subplots()
    draw_accuracy_by_size(ax, {"max/max": {"10": 0.2, "100": 0.6}}, [10, 100], classes=12, training_size=100)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["max/max", "chance (1/12)", "training size 100"]

    curves = [{"spec": "max/max", "sizes": [10, 100], "mean": [0.2, 0.6]}]
    results = {"evaluation": {"sizes": [10, 100]}, "data": {"classes": 12}, "budget_parameters": {"points": 100}}
    fig = plot_against_paper(curves, {"max/max": {1000: 0.8, 100: 0.7, 50: 0.6}}, results, "ours")
    assert [len(ax.get_lines()) for ax in fig.axes] == [3, 3]   # one column, chance and the training size


def test_the_figure_beside_the_paper_says_when_a_mean_leaves_runs_out_and_names_every_column() -> None:
    """A column whose runs partly collapsed is the mean of the others, and the legend says of how many;
    a column none of whose runs has an accuracy is drawn only for the paper, and still has an entry."""
    curves = [{"spec": "max/max", "sizes": [10, 100], "mean": [0.2, 0.6], "runs": 3, "of": 3},
              {"spec": "max/r-lse", "sizes": [10, 100], "mean": [0.1, 0.3], "runs": 1, "of": 3}]
    paper = {spec: {1000: 0.8, 100: 0.7, 50: 0.6} for spec in ("max/max", "max/r-lse", "r-lse/r-lse")}
    results = {"evaluation": {"sizes": [10, 100]}, "data": {"classes": 12}, "budget_parameters": {"points": 100}}
    fig = plot_against_paper(curves, paper, results, "ours")
    legend, = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "max/max", "max/r-lse (mean of 1 of 3 runs)", "r-lse/r-lse (paper only: no run of ours has an accuracy)"]
    assert [len(ax.get_lines()) for ax in fig.axes] == [4, 5]
    plt.close(fig)

    fig = plot_confusions({100: np.eye(3), 10: np.full((3, 3), 1 / 3)}, ["a", "b", "c"], "t")
    assert fig.axes[0].get_title() == "n = 100: accuracy 100%" and fig.axes[1].get_title() == "n = 10: accuracy 33%"
    plt.close("all")


def test_learning_curves_draw_each_column_in_its_own_style_as_the_table_figure_does() -> None:
    """Twelve columns exceed matplotlib's ten colours: each keeps the style it has beside the paper."""
    specs = ["max/max", "max/r-lme"]                                # C0 and, by the default cycle, C0 again
    runs = [{"spec": spec, "seed": seed, "error": None, "collapsed": False,
             "learning_curve": {"steps": [10, 20], "loss": [2.0, 1.0 + seed / 10],
                                "test": {"metric": "test_accuracy", "steps": [10, 20], "values": [0.3, 0.5 + seed / 10]}}}
            for spec in specs for seed in range(3)]
    fig = plot_learning_curves({"runs": runs}, "offline shapes")
    loss, accuracy = fig.axes
    for ax in (loss, accuracy):
        assert [line.get_label().split(" (")[0] for line in ax.lines] == specs
        for line, spec in zip(ax.lines, specs):
            assert line.get_color() == column_style(spec)["color"] and line.get_linestyle() == column_style(spec)["ls"]
    assert column_style("max/max")["color"] != column_style("max/r-lme")["color"]
    assert [line.get_marker() for line in accuracy.lines] == ["o", "s"] and loss.lines[0].get_marker() == "None"
    # one legend, below the panels, where it hides no line (a column near chance ran under it in a corner)
    assert loss.get_legend() is None and accuracy.get_legend() is None and loss.get_title() == "offline shapes"
    legend, = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["max/max (3 runs)", "max/r-lme (3 runs)"]
    fig.canvas.draw()
    below = legend.get_window_extent()
    assert all(below.y1 <= ax.get_window_extent().y0 for ax in (loss, accuracy))
    plt.close(fig)
    curves = [{"spec": spec, "sizes": [10, 100], "mean": [0.2, 0.6]} for spec in specs]
    beside = plot_against_paper(curves, {}, {"evaluation": {"sizes": [10, 100]}, "data": {"classes": 12},
                                             "budget_parameters": {"points": 100}}, "ours")
    drawn = {line.get_label(): line for line in beside.axes[0].lines if line.get_label() in specs}
    assert {spec: (line.get_color(), line.get_marker()) for spec, line in drawn.items()} == {
        spec: (column_style(spec)["color"], column_style(spec)["marker"]) for spec in specs}
    plt.close(beside)
