"""The training-curve plot of chapters 8 to 11: the moving average is the mean of each window, and
the plot draws one smoothed line per run, the baseline and a legend without hidden curves."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from setfuncs.experiments.curves import moving_average, plot_training_curves


@pytest.mark.parametrize("window", [1, 3, 20])
def test_moving_average_is_the_mean_of_each_window(window: int) -> None:
    values = np.random.default_rng(window).normal(size=57)
    brute = [values[t:t + window].mean() for t in range(len(values) - window + 1)]
    np.testing.assert_allclose(moving_average(values, window), brute, rtol=1e-12)


def test_moving_average_refuses_bad_windows() -> None:
    with pytest.raises(ValueError, match="positive int"):
        moving_average([1.0, 2.0], 0)
    with pytest.raises(ValueError, match="at least window = 3"):
        moving_average([1.0, 2.0], 3)


def test_plot_draws_smoothed_curves_baseline_and_labels() -> None:
    fig, ax = plt.subplots()
    runs = {"a": np.arange(30.0), "b": np.ones(30), "_hidden": np.zeros(30)}
    plot_training_curves(ax, runs, window=10, quantity="NLL", baseline=(0.5, "constant"), yscale="log", title="t")
    lines = ax.get_lines()
    assert len(lines) == 4                                       # three runs and the baseline
    np.testing.assert_allclose(lines[0].get_ydata(), np.arange(21) + 4.5)
    assert lines[3].get_ydata()[0] == 0.5 and lines[3].get_label() == "constant"
    assert ax.get_ylabel() == "NLL (moving average of 10)" and ax.get_xlabel() == "Adam step"
    assert ax.get_yscale() == "log" and ax.get_title() == "t"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "constant"]
    plt.close(fig)


def test_settings_replace_the_labels() -> None:
    fig, ax = plt.subplots()
    plot_training_curves(ax, {"run": np.ones(5)}, window=2, ylabel="ELBO\nmoving average of 2")
    assert ax.get_ylabel() == "ELBO\nmoving average of 2"
    plt.close(fig)
