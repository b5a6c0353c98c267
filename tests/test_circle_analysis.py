"""Chapter 8's analysis and figures: medians per configuration, the grids and counts read from them,
the constant predictor, the reference comparison and the pictures of circles."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from setfuncs.experiments import circle
from setfuncs.experiments.circle.baseline import constant_mse
from setfuncs.experiments.circle.draw import draw_population, plot_predictions
from setfuncs.experiments.circle.figures import plot_by_population_size, plot_median_grids
from setfuncs.experiments.circle.medians import best_configuration, lowest_counts, median_grids, median_mse
from setfuncs.experiments.circle.reference import compare_with_miniball
from setfuncs.experiments.sweeps import AGGREGATIONS, SETTINGS, all_configurations, spec_of


def synthetic_mse() -> dict[str, np.ndarray]:
    """Three seeds of every configuration, with MSEs that depend on the configuration."""
    rng = np.random.default_rng(0)
    return {spec_of(*c): rng.uniform(0.1, 1.0, size=3) for c in all_configurations()}


def test_median_mse_is_the_median_and_nan_without_runs() -> None:
    mse_of = {"max/max": np.array([0.3, np.inf, 0.1]), "mean/mean": np.array([np.inf, np.inf, 0.2])}
    assert median_mse(mse_of, "max/max") == 0.3
    assert median_mse(mse_of, "mean/mean") == np.inf         # at least half of the seeds failed
    assert np.isnan(median_mse(mse_of, "lse/lse"))


def test_best_configuration_has_the_lowest_median() -> None:
    mse_of = synthetic_mse()
    for setting in SETTINGS:
        best = best_configuration(mse_of, setting)
        assert best[0] == setting and "lme" not in best          # the paper's grid only
        medians = [np.median(mse_of[spec_of(setting, e, f)]) for e in ("mean", "max", "lse")
                   for f in ("mean", "max", "lse")]
        assert np.median(mse_of[spec_of(*best)]) == min(medians)
    with pytest.raises(ValueError, match="setting must be one of"):
        best_configuration(mse_of, "plain")


def test_median_grids_place_every_configuration() -> None:
    mse_of = synthetic_mse()
    grids = median_grids(mse_of)
    assert list(grids) == list(SETTINGS)
    for setting, grid in grids.items():
        assert grid.shape == (len(AGGREGATIONS), len(AGGREGATIONS))
        for i, e in enumerate(AGGREGATIONS):
            for j, f in enumerate(AGGREGATIONS):
                if {e, f} == {"lse", "lme"}:
                    assert np.isnan(grid[i, j])
                else:
                    assert grid[i, j] == np.median(mse_of[spec_of(setting, e, f)])


def test_lowest_counts_count_rows_and_columns_of_the_paper_grid() -> None:
    grid = np.full((4, 4), 9.0)
    grid[:3, :3] = [[3.0, 1.0, 2.0],      # equivariant mean: max is the best final
                    [0.5, 2.0, 2.5],      # equivariant max: mean is the best final
                    [4.0, 0.7, 5.0]]      # equivariant lse: max is the best final
    grid[0, 3] = grid[3, 0] = 0.0         # log-mean-exp cells are not on the paper's grid
    final, equivariant = lowest_counts({s: grid for s in SETTINGS})
    assert final == {"mean": 4, "max": 8, "lse": 0}
    assert equivariant == {"mean": 4, "max": 4, "lse": 4}   # by column: max, lse, mean equivariant is the lowest
    assert sum(final.values()) == sum(equivariant.values()) == 12


def test_constant_mse_is_the_spread_of_the_targets() -> None:
    y = torch.tensor([[0.0, 0.0, 1.0], [2.0, 0.0, 3.0], [1.0, 3.0, 2.0]])
    direct = float(((y[:, 2] - 2.0) ** 2).mean() + ((y[:, :2] - torch.tensor([1.0, 1.0])) ** 2).sum(1).mean())
    assert constant_mse(y) == pytest.approx(direct)
    shifted = circle.circle_errors((y.mean(0) + 0.1).expand_as(y), y)["mse"]
    assert constant_mse(y) < shifted                          # the mean is the best constant


def test_solvers_agree_with_miniball() -> None:
    points = np.random.default_rng(1).normal(size=(20, 15, 2))
    seconds, differences = compare_with_miniball(points)
    assert len(seconds) == 3 and all(s > 0 for s in seconds.values())
    assert set(differences) == {"batched_radius", "welzl_radius", "batched_center"}
    assert max(differences.values()) < 1e-6


def test_draw_population_rings_the_particles_on_the_circle() -> None:
    points = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 0.5], [0.2, -0.3]])
    center, radius = circle.min_enclosing_circle(points)
    fig, ax = plt.subplots()
    draw_population(ax, points, center, radius)
    particles, ringed, mean = ax.collections
    assert len(ringed.get_offsets()) == 2                     # the diameter's two ends
    np.testing.assert_allclose(mean.get_offsets()[0], points.mean(0))
    assert len(ax.patches) == 1 and ax.patches[0].get_radius() == pytest.approx(1.0)
    plt.close(fig)


def test_figures_draw_what_they_are_given() -> None:
    x, y, _ = circle.test_set(8, 20, seed=0)
    prediction = y.numpy() + 0.1
    fig = plot_predictions(x.numpy(), y.numpy(), {"a": prediction}, {"a": "tab:red"}, {"a": "max/max"})
    assert len(fig.axes) == 8 and all(len(ax.patches) == 2 for ax in fig.axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["true circle", "a: max/max"]

    grids = median_grids(synthetic_mse())
    grids["plain/plain"][0, 0] = np.inf
    fig = plot_median_grids(grids)
    assert "∞" in [t.get_text() for t in fig.axes[0].texts]
    curves = [{"setting": "plain/plain", "spec": "max/max", "sizes": [10, 20], "mse": [0.2, 0.1]}]
    fig = plot_by_population_size(curves, [1.0, 1.0])
    assert len(fig.axes[0].get_lines()) == 3
    plt.close("all")
