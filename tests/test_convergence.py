"""Convergence from the runs' test checkpoints: curves per group, and whether the metric still moves."""

from __future__ import annotations

import json

import numpy as np
import pytest

from setfuncs.experiments.convergence import (checkpoint_curves, late_change, late_change_lines, loss_curves,
                                              plot_checkpoint_curves, plot_loss_curves)
from setfuncs.experiments.results import RESULTS_DIR

STEPS = [100, 200, 300, 400, 500]


def runs(slope_of: dict[str, float], seeds: int = 10, noise: float = 0.01) -> dict:
    """Runs whose test metric falls by ``slope`` per checkpoint, plus noise."""
    rng = np.random.default_rng(0)
    return {"runs": [{"spec": f"{group}/x", "setting": group, "seed": seed, "error": None, "collapsed": False,
                      "learning_curve": {"test": {"metric": "mse", "steps": STEPS,
                                                  "values": list(1.0 - slope * np.arange(5) + noise * rng.standard_normal(5))}}}
                     for group, slope in slope_of.items() for seed in range(seeds)]}


def test_a_metric_that_still_falls_is_still_improving_and_a_flat_one_undecided() -> None:
    rows = {r["label"]: r for r in late_change(runs({"falling": 0.1, "flat": 0.0, "rising": -0.1}), "setting",
                                               higher_is_better=False)}
    assert rows["falling"]["better"] == "still improving" and rows["rising"]["better"] == "getting worse"
    assert rows["flat"]["better"] == "undecided"
    assert rows["falling"]["estimate"] == pytest.approx(0.1, abs=0.01) and rows["falling"]["seeds"] == 10
    flipped = {r["label"]: r["better"] for r in late_change(runs({"falling": 0.1}), "setting", higher_is_better=True)}
    assert flipped == {"falling": "getting worse"}                # accuracy falling: worse


def test_the_printed_lines_give_each_groups_verdict_and_count_those_still_improving() -> None:
    results = {**runs({"falling": 0.1, "flat": 0.0}), "budget": "medium"}
    lines = late_change_lines(results, "setting", "test MSE", higher_is_better=False)
    rows = {r["label"]: r for r in late_change(results, "setting", higher_is_better=False)}
    assert len(lines) == 3
    assert lines[0].startswith("falling test MSE, step 400 -> 500: median ") and lines[0].endswith(": still improving")
    assert f"Holm-adjusted p {rows['falling']['adjusted']:.3g}" in lines[0] and "(10 seeds)" in lines[0]
    assert lines[1].startswith("flat    test MSE") and lines[1].endswith(": undecided")
    assert lines[2] == "-> still improving at the end of the medium budget: 1 of 2 settings (falling)"


def test_a_group_whose_seeds_all_changed_alike_shows_the_median_interval_as_a_tie() -> None:
    """Accuracies on one test set move in steps of 1/size: every seed may change by the same amount
    (or none) over the last interval. The change is tested by the sign test, whose order-statistic
    interval of the median keeps its level with ties: of no width, it is said to come from a tie, not
    hidden (as Student's interval of 0 spread is, which would read as certainty)."""
    results = {**runs({"frozen": 0.0}, noise=0.0), "budget": "medium"}
    row = late_change(results, "setting", higher_is_better=False)[0]
    assert row["low"] == row["high"] == 0 and row["better"] == "undecided" and row["test"] == "sign"
    line = late_change_lines(results, "setting", "test MSE", higher_is_better=False)[0]
    assert "95 % interval 0 to 0 (the differences tie) (10 seeds)" in line and "all equal" not in line


def test_the_printed_lines_name_the_groups_by_the_noun_given() -> None:
    results = {**runs({"falling": 0.1, "flat": 0.0}), "budget": "medium"}
    lines = late_change_lines(results, "setting", "test MSE", higher_is_better=False, noun="column")
    assert lines[-1] == "-> still improving at the end of the medium budget: 1 of 2 columns (falling)"
    assert late_change_lines({**runs({"a": 0.1}, seeds=1), "budget": "quick"}, "setting", "test MSE",
                             higher_is_better=False, noun="column")[0].startswith("no column has checkpoints")


def test_the_printed_lines_name_the_groups_left_untested_and_why() -> None:
    """A column whose runs collapsed in all but one seed has no paired change to test: the count of
    columns still improving leaves it out, and a last line names it with its seeds, so that a
    reader of "0 of 2 columns" in a file of three knows which is missing."""
    results = {**runs({"falling": 0.1, "flat": 0.0, "collapsing": 0.1}), "budget": "medium"}
    for run in results["runs"]:
        if run["setting"] == "collapsing" and run["seed"] > 0:
            run["collapsed"] = True
    lines = late_change_lines(results, "setting", "test MSE", higher_is_better=False, noun="column")
    assert lines[-2] == "-> still improving at the end of the medium budget: 1 of 2 columns (falling)"
    assert lines[-1].strip().startswith("not tested, with test checkpoints from fewer than two seeds")
    assert lines[-1].endswith(": collapsing (1 seed)")
    for run in results["runs"]:
        run["collapsed"] = run["collapsed"] or run["setting"] == "collapsing"
    lines = late_change_lines(results, "setting", "test MSE", higher_is_better=False, noun="column")
    assert lines[-1].endswith(": collapsing (0 seeds)") and len(lines) == 4
    complete = {**runs({"falling": 0.1, "flat": 0.0}), "budget": "medium"}
    assert not any("not tested" in line for line in late_change_lines(complete, "setting", "test MSE", False))


def test_the_printed_lines_say_when_no_group_has_two_seeds() -> None:
    results = {**runs({"a": 0.1, "b": 0.0}, seeds=1), "budget": "quick"}
    assert late_change_lines(results, "setting", "test MSE", higher_is_better=False) == [
        "no setting has checkpoints from two seeds: these runs cannot tell whether the test MSE still moves"]


def test_curves_give_median_and_quartiles_per_group_and_leave_out_failed_runs() -> None:
    results = runs({"a": 0.1})
    results["runs"][0]["collapsed"] = True
    results["runs"][1]["learning_curve"]["test"]["values"][2] = float("nan")
    curve = checkpoint_curves(results, "setting")["a"]
    assert curve["runs"] == 8 and curve["steps"] == STEPS
    assert (curve["q25"] <= curve["median"]).all() and (curve["median"] <= curve["q75"]).all()
    assert curve["median"][0] - curve["median"][-1] == pytest.approx(0.4, abs=0.02)
    results["runs"][2]["learning_curve"]["test"]["steps"] = [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="different steps"):
        checkpoint_curves(results, "setting")


def test_a_file_without_checkpoints_is_refused_with_the_reason() -> None:
    earlier = json.loads((RESULTS_DIR / "circle-medium.json").read_text())
    with pytest.raises(ValueError, match="written before the shared run protocol"):
        checkpoint_curves(earlier, "setting")


def with_losses(results: dict, scale_of: dict[str, float]) -> dict:
    """``results`` whose runs record a training loss curve of 4 windows, ``scale`` times the seed + 1 halving each window."""
    for run in results["runs"]:
        run["learning_curve"]["steps"] = [5, 10, 15, 20]
        run["learning_curve"]["loss"] = [scale_of[run["setting"]] * (run["seed"] + 1) / 2 ** k for k in range(4)]
    return results


def test_loss_curves_give_median_and_quartiles_per_group_over_trained_runs() -> None:
    results = with_losses(runs({"a": 0.1, "b": 0.1}, seeds=5), {"a": 1.0, "b": 10.0})
    results["runs"][4]["collapsed"] = True                          # group a's seed 4 is left out
    curves = loss_curves(results, "setting")
    assert curves["a"]["runs"] == 4 and curves["b"]["runs"] == 5 and curves["a"]["steps"] == [5, 10, 15, 20]
    assert curves["a"]["median"] == pytest.approx([2.5 / 2 ** k for k in range(4)])     # seeds 1..4: median 2.5
    assert curves["b"]["median"] == pytest.approx([30.0 / 2 ** k for k in range(4)])
    assert curves["b"]["q25"] == pytest.approx([20.0 / 2 ** k for k in range(4)])
    results["runs"][0]["learning_curve"]["steps"] = [1, 2, 3, 4]
    with pytest.raises(ValueError, match="different windows"):
        loss_curves(results, "setting")


def test_loss_curves_refuse_a_file_without_learning_curves() -> None:
    earlier = json.loads((RESULTS_DIR / "circle-medium.json").read_text())
    with pytest.raises(ValueError, match="written before the shared run protocol"):
        loss_curves(earlier, "setting")


def test_a_negative_loss_is_drawn_on_a_linear_scale_and_refused_on_a_log_one() -> None:
    """A negative log-likelihood (the mixture's Beta NLL) goes below zero: a log scale would silently
    drop those points, so the log plot refuses it by name, and ``log=False`` draws every point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = with_losses(runs({"a": 0.1}, seeds=3), {"a": -1.0})
    curves = loss_curves(results, "setting")
    fig, ax = plt.subplots()
    try:
        with pytest.raises(ValueError, match="not positive everywhere.*log=False"):
            plot_loss_curves(ax, curves, quantity="Beta NLL")
        plot_loss_curves(ax, curves, quantity="Beta NLL", log=False)
        assert ax.get_yscale() == "linear"
        assert list(ax.lines[0].get_ydata()) == pytest.approx(list(curves["a"]["median"]))
        positive = loss_curves(with_losses(runs({"a": 0.1}, seeds=3), {"a": 1.0}), "setting")
        ax.clear()
        plot_loss_curves(ax, positive)
        assert ax.get_yscale() == "log"
    finally:
        plt.close(fig)


def test_a_groups_style_is_given_to_its_line_in_both_plots() -> None:
    """A chapter's colours for its configurations reach the lines (and only the styled group's line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = with_losses(runs({"a": 0.1, "b": 0.1}, seeds=3), {"a": 1.0, "b": 2.0})
    styles = {"a": {"color": "#123456", "ls": "--", "marker": "s"}}
    fig, (left, right) = plt.subplots(1, 2)
    try:
        plot_loss_curves(left, loss_curves(results, "setting"), styles=styles)
        plot_checkpoint_curves(right, checkpoint_curves(results, "setting"), "test MSE", styles=styles)
        for ax in (left, right):
            a, b = ax.lines
            assert a.get_color() == "#123456" and a.get_linestyle() == "--" and a.get_marker() == "s"
            assert b.get_color() != "#123456" and b.get_linestyle() == "-"
        assert right.lines[1].get_marker() == "o"                     # unstyled checkpoints keep their markers
        assert [t.get_text() for t in right.get_legend().get_texts()] == ["a (3 runs)", "b (3 runs)"]
        one = runs({"a": 0.1}, seeds=1)
        plot_checkpoint_curves(right, checkpoint_curves(one, "setting"), "test MSE")
        assert right.get_legend().get_texts()[-1].get_text() == "a (1 run)"
    finally:
        plt.close(fig)
