"""Chapter 9's analysis and figures: the forward-hook capture of the first layer, the regrouping of
runs by equivariant aggregation, Figure 4b over both grids, and the EM reference comparison."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from setfuncs.experiments import mixture
from setfuncs.experiments.mixture.accuracy import accuracy_against_metric
from setfuncs.experiments.mixture.figures import (draw_preactivations, plot_by_population_size,
                                                  plot_estimator_curves, plot_populations)
from setfuncs.experiments.mixture.first_layer import first_layer_capture, initial_first_layer, saturated_share
from setfuncs.experiments.mixture.reference import compare_with_sklearn
from setfuncs.experiments.mixture.violins import plot_violins, violin_groups, violin_table
from setfuncs.experiments.sweeps import all_configurations, spec_of


def test_capture_returns_what_the_first_layer_computes() -> None:
    torch.manual_seed(0)
    model = mixture.make_model("plain/plain", "lse", "mean", mixture.QUICK)
    x = mixture.test_populations(4, 30, seed=1).x
    u, z = first_layer_capture(model, x)
    layer = model.combine[0]
    with torch.no_grad():
        h = model.embed(x)
        expected_u = h - layer.aggregate(h, None).unsqueeze(1)
        expected_z = layer.linear(expected_u)
    torch.testing.assert_close(u, expected_u)
    torch.testing.assert_close(z, expected_z)
    assert not layer.linear._forward_hooks                     # the hook is gone


@pytest.mark.parametrize("n", [20, 100])
def test_lse_shifts_the_first_layer_by_at_least_ln_n(n: int) -> None:
    mean_shift, _ = initial_first_layer("mean/mean", n, mixture.QUICK, populations=4)
    lse_shift, lse_saturated = initial_first_layer("lse/mean", n, mixture.QUICK, populations=4)
    assert abs(mean_shift) < 1e-5                             # x_i - mean(X) averages to zero
    assert lse_shift <= -math.log(n) + 1e-5                   # Jensen: LSE(X) >= mean(X) + ln N
    assert 0.0 <= lse_saturated <= 1.0
    with pytest.raises(ValueError, match="not a configuration"):
        initial_first_layer("sum/mean", n, mixture.QUICK)


def test_saturated_share_counts_beyond_the_threshold() -> None:
    z = np.array([-3.0, -2.0, 0.0, 1.5, 2.5, 4.0])
    assert saturated_share(z) == pytest.approx(3 / 6)          # |z| > 2, not >=
    assert saturated_share(torch.tensor(z), threshold=3.5) == pytest.approx(1 / 6)


def run(setting: str, equivariant: str, final: str, seed: int, rng: np.random.Generator, **status) -> dict:
    """A synthetic finished mixture run."""
    per_population = rng.normal(size=5).tolist()
    return {"spec": spec_of(setting, equivariant, final), "setting": setting, "equivariant": equivariant,
            "final": final, "seed": seed, "error": None, "collapsed": False, "metric": float(rng.normal()),
            "test_mae": float(rng.uniform(0.01, 0.1)), "kde_floor_hits": int(rng.integers(0, 9)),
            "metric_per_population": {"100": per_population}, **status}


def synthetic_results() -> dict:
    rng = np.random.default_rng(0)
    runs = [run(*c, seed, rng) for c in all_configurations() for seed in range(2)]
    runs[0]["collapsed"] = True
    runs[1].update(error="diverged", metric=None)
    runs.append({"spec": runs[2]["spec"], "seed": 7, "failure": "engine"})
    return {"runs": runs}


def test_accuracy_against_metric_equals_a_direct_regrouping() -> None:
    results = synthetic_results()
    em_mae = 0.05
    rows = accuracy_against_metric(results, em_mae)
    assert [row["group"] for row in rows] == ["mean", "r-mean", "max", "r-max", "lse", "r-lse", "lme", "r-lme"]
    trained = [r for r in results["runs"] if "failure" not in r and r["error"] is None and not r["collapsed"]]
    assert sum(row["runs"] for row in rows) == len(trained)
    for row in rows:
        learnable = row["group"].startswith("r-")
        group = [r for r in trained if r["equivariant"] == row["group"].removeprefix("r-")
                 and (r["setting"].split("/")[0] == "recurrent") == learnable]
        assert row["runs"] == len(group)
        assert row["mae"] == np.median([r["test_mae"] for r in group])
        assert row["better"] == np.mean([r["test_mae"] < em_mae for r in group])
        assert row["median_metric"] == np.median([r["metric"] for r in group])
        assert row["mean_metric"] == np.median([np.mean(r["metric_per_population"]["100"]) for r in group])
        assert row["floor"] == np.median([r["kde_floor_hits"] for r in group])


def test_violins_cover_both_grids_without_repeating_mean_and_max() -> None:
    results = synthetic_results()
    for by in ("equivariant", "final"):
        groups = violin_groups(results, by, bootstraps=50)
        assert [g["label"] for g in groups] == ["mean", "r-mean", "max", "r-max", "lse", "r-lse", "lme", "r-lme"]
        paper = mixture.peak_performance(results, by=by, bootstraps=50, variant="paper")
        for ours, theirs in zip(groups, paper):
            np.testing.assert_array_equal(ours["peaks"], theirs["peaks"])
    table = violin_table(results, bootstraps=50)
    assert [(row["by"], row["label"]) for row in table] == (
        [(by, label) for by in ("equivariant", "final") for label in ("mean", "r-mean", "max", "r-max", "lse", "r-lse")]
        + [(by, label) for by in ("equivariant", "final") for label in ("lme", "r-lme")])
    fig = plot_violins({by: violin_groups(results, by, bootstraps=50) for by in ("equivariant", "final")})
    assert len(fig.axes) == 2 and fig.axes[0].get_yscale() == "symlog"
    plt.close(fig)


def test_em_agrees_with_scikit_learn() -> None:
    populations = mixture.sample_populations(6, 60, torch.Generator().manual_seed(3))
    ours, theirs, seconds = compare_with_sklearn(populations.x.double())
    assert theirs.shape == (6,) and set(seconds) == {"batched", "sklearn"}
    np.testing.assert_allclose(ours.smaller_weight.numpy(), theirs, atol=1e-6)


def test_figures_draw_what_they_are_given() -> None:
    fig = plot_populations(mixture.sample_populations(3, 50, torch.Generator().manual_seed(0)))
    assert len(fig.axes) == 3 and fig.get_suptitle().startswith("populations of 50")

    summary = {key: np.linspace(0.1, 0.3, 3) for key in ("median", "q05", "q25", "q75", "q95")}
    curve = {"sizes": np.array([5, 50, 500]), "model": summary, "em": summary}
    fig = plot_estimator_curves(torch.zeros(10, 2), 0.2, {"plain/plain": curve}, {"plain/plain": "mean/mean"}, "quick")
    assert len(fig.axes) == 2
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["EM", "mean/mean", "truth"]

    fig, ax = plt.subplots()
    draw_preactivations(ax, np.array([-3.0, 0.0, 3.0]), np.array([0.5, 1.0]), "t")
    assert len(ax.patches) > 80 and ax.get_title() == "t"

    rows = [{"setting": "plain/plain", "sizes": [10, 100], "median": [0.5, -0.5], "best": [0.1, -1.0],
             "best_spec": "mean/mean"}]
    fig = plot_by_population_size(rows)
    assert len(fig.axes[0].get_lines()) == 3                   # median, best and the zero line
    plt.close("all")


@pytest.mark.parametrize("limits", [(-30.0, 40.0), (-3.0, 2.5), (-0.8, 0.9)])
def test_the_symlog_axis_labels_plain_numbers(limits: tuple[float, float]) -> None:
    from setfuncs.experiments.mixture.figures import plain_symlog_axis

    fig, ax = plt.subplots()
    ax.plot([0, 1], list(limits))
    plain_symlog_axis(ax, "metric")
    ax.set_ylim(*limits)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    ticks = [t for t in ax.get_yticks() if limits[0] <= t <= limits[1]]
    plt.close(fig)
    assert labels and 0.0 in ticks and len(labels) >= 3
    assert not any("^" in label or "10$" in label or "e" in label.lower() for label in labels), labels
    for label in labels:                       # every label reads as the number at its tick
        float(label.replace("\N{MINUS SIGN}", "-"))
    assert "log scale beyond" in ax.get_ylabel()
