"""Peak statistics (setfuncs.experiments.peaks): the best of batches of runs against a brute-force
count, which runs a statistic may rank, and that a run whose metric is NaN never becomes a best run
in a table, wherever it stands in the results file."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from setfuncs.experiments import circle, mixture
from setfuncs.experiments.peaks import batch_peaks, finite_metric, median_peak
from setfuncs.experiments.strictjson import replace_non_finite, restore_non_finite

METRICS = np.array([3.0, 1.0, 2.0, 5.0])


def _exact_peak_distribution(metrics: np.ndarray, batch_size: int) -> dict[float, float]:
    """P(peak = m) for every value m, by counting all len(metrics) ** batch_size equally likely batches."""
    batches = list(itertools.product(metrics, repeat=batch_size))
    peaks = [min(batch) for batch in batches]
    return {float(m): peaks.count(m) / len(batches) for m in np.unique(metrics)}


def test_batch_peaks_replays_the_documented_draws() -> None:
    peaks = batch_peaks(METRICS, batch_size=3, bootstraps=50, seed=7)
    indices = np.random.default_rng(7).integers(0, METRICS.size, size=(50, 3))
    expected = [min(METRICS[j] for j in batch) for batch in indices]
    assert peaks.tolist() == expected
    assert median_peak(METRICS, 3, 50, 7) == float(np.median(expected))


@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_batch_peaks_follow_the_exact_distribution_of_a_batch_minimum(batch_size: int) -> None:
    exact = _exact_peak_distribution(METRICS, batch_size)
    peaks = batch_peaks(METRICS, batch_size, bootstraps=100_000, seed=0)
    for value, probability in exact.items():
        assert np.mean(peaks == value) == pytest.approx(probability, abs=0.01)
    # the median peak is the exact distribution's median (no probability mass sits near 1/2 here)
    cumulative = np.cumsum([exact[v] for v in sorted(exact)])
    exact_median = sorted(exact)[int(np.searchsorted(cumulative, 0.5))]
    assert median_peak(METRICS, batch_size, 100_000, 0) == exact_median


def test_batch_peaks_rank_infinity_last_and_refuse_what_they_cannot_rank() -> None:
    failed = np.array([np.inf, 1.0])
    assert set(batch_peaks(failed, 2, 200).tolist()) == {1.0, np.inf}          # inf only if both drawn failed
    assert np.all(batch_peaks(np.array([np.inf]), 3, 10) == np.inf)
    with pytest.raises(ValueError, match="NaN"):
        batch_peaks(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="at least one"):
        batch_peaks(np.array([]))
    for bad in ({"batch_size": 0}, {"bootstraps": -1}, {"batch_size": 2.0}, {"bootstraps": True}):
        with pytest.raises(ValueError, match=f"{next(iter(bad))} must be a positive int"):
            batch_peaks(METRICS, **bad)


def test_finite_metric_keeps_only_a_trained_runs_finite_numbers() -> None:
    run = {"spec": "max/max", "seed": 0, "error": None, "collapsed": False, "mse": 0.5,
           "mse_by_population_size": {"20": 0.5, "100": math.nan, "5": math.inf}}
    assert finite_metric(run, "mse") == 0.5 and finite_metric(run, "mse_by_population_size", 20) == 0.5
    assert finite_metric(run, "mse_by_population_size", 100) is None          # NaN
    assert finite_metric(run, "mse_by_population_size", 5) is None            # inf
    assert finite_metric(run, "mse_by_population_size", 50) is None           # not tested at that size
    for other in ({"mse": math.nan}, {"mse": -math.inf}, {"mse": None}, {"collapsed": True},
                  {"error": "diverged"}, {"failure": {"kind": "raised"}}):
        assert finite_metric({**run, **other}, "mse") is None, other


# --- a NaN metric never becomes a best run ------------------------------------------------------------------

def _as_read(results: dict) -> dict:
    """``results`` as a sweep writes it (NaN as null with a non_finite entry) and the reader restores it."""
    return restore_non_finite(json.loads(json.dumps(replace_non_finite(results))))


def _circle_run(seed: int, mse: float) -> dict:
    return {"setting": "plain/plain", "spec": "max/max", "equivariant": "max", "final": "max", "seed": seed,
            "mse": mse, "radius_mse": mse / 4, "center_mse": 3 * mse / 4, "error": None, "collapsed": False,
            "mse_by_population_size": {"5": 2 * mse, "20": mse}}


def _mixture_run(seed: int, metric: float) -> dict:
    return {"setting": "plain/plain", "spec": "mean/max", "equivariant": "mean", "final": "max", "seed": seed,
            "metric": metric, "error": None, "collapsed": False,
            "metric_by_population_size": {"10": 2 * metric, "100": metric}}


@pytest.mark.parametrize("nan_first", [True, False], ids=["NaN first", "NaN last"])
def test_a_nan_mse_never_becomes_the_best_circle_run(nan_first: bool) -> None:
    runs = [_circle_run(1, 2.0), _circle_run(2, 1.0)]
    nan = _circle_run(0, math.nan)
    results = _as_read({"runs": [nan, *runs] if nan_first else [*runs, nan]})
    assert math.isnan(next(r for r in results["runs"] if r["seed"] == 0)["mse"])       # the reader's NaN
    (row,) = circle.by_population_size(results)
    assert (row["seed"], row["sizes"], row["mse"]) == (2, [5, 20], [2.0, 1.0])
    (table,) = circle.circle_table(results, batch_size=2, bootstraps=100)
    assert (table["runs"], table["best_seed"], table["best_mse"]) == (3, 2, 1.0)
    assert table["median_best_mse"] in (1.0, 2.0)
    assert circle.mse_by_spec(results)["max/max"].tolist().count(np.inf) == 1           # findings: the worst


@pytest.mark.parametrize("nan_first", [True, False], ids=["NaN first", "NaN last"])
def test_a_nan_metric_never_becomes_the_best_mixture_run(nan_first: bool) -> None:
    runs = [_mixture_run(1, 2.0), _mixture_run(2, -1.0)]
    nan = _mixture_run(0, math.nan)
    results = _as_read({"runs": [nan, *runs] if nan_first else [*runs, nan]})
    (row,) = mixture.by_population_size(results)
    assert (row["best_seed"], row["sizes"], row["best"], row["median"]) == (2, [10, 100], [-2.0, -1.0], [1.0, 0.5])
    table = {(r["by"], r["label"]): r for r in mixture.mixture_table(results, bootstraps=100)}
    mean = table["equivariant", "mean"]
    assert (mean["runs"], mean["best_seed"], mean["best_metric"]) == (3, 2, -1.0)
    assert np.isfinite([mean["median_peak"], mean["median_metric"]]).all()
