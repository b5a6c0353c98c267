"""The mixture's component spread ``std``: the default streams are those of every committed run, a
different ``std`` scales the same noise (in training, in the test populations and in the sweep's
evaluation), the probe ``scripts/probes/mixture_sigma_models.py`` writes a file that
``mixture.sensitivity`` reads, and the reader refuses what it cannot read, naming the file."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from setfuncs.experiments.mixture.data import (COMPONENT_STD, mixture_batch, mixture_log_density,
                                               padded_training_sampler, sample_populations, training_sampler)
from setfuncs.experiments.mixture.data import test_populations as fixed_test_set       # not a test
from setfuncs.experiments.mixture.sensitivity import (PROBE, QUANTITIES, RESULTS_NAME, SIGMAS, em_comparison,
                                                      load_sensitivity, run_values, seeds_needed, sensitivity_table)
from setfuncs.experiments.mixture.budget import Budget
from setfuncs.experiments.mixture.sweep import evaluate_metric, train_model
from setfuncs.experiments.paired import smallest_p_value
from setfuncs.experiments.results import results_file
from setfuncs.experiments.sweeps import TEST_SEED, TRAIN_SEED

ROOT = Path(__file__).resolve().parents[1]
TINY = Budget("tiny", steps=12, batch=6, lr=1e-2, clip=1.0, hidden=8, equivariant_layers=1,
              recurrent_steps=2, test_size=4, test_population_sizes=(10, 100), bootstraps=20)
#: sha256 of the default streams, computed at 2c85734 (before ``std`` was threaded through) with torch 2.13.0.
FINGERPRINTS = {"training": "beb2a36bfc1921f9ab2e55559ab0d55ed85a2b3b9cc38e70e5edf4df604f7802",
                "padded": "160d53123236d00f0cb15422604f4bcc3bbc4e989e2aa8f66a3770a5a6f7cdc4",
                "test": "7354bc90b1d37b36b3a2a11c47d75d02b036c4e270f730ace81022387368974d",
                "density": "66b621370396b236c628812f8f6c6b1a0e2a3c2f02aa725b5799ca82127ab228"}


def _digest(tensors: list[torch.Tensor]) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def _streams(**std: float) -> dict[str, str]:
    """The fingerprints of the sweep's streams, called with ``std`` if given, else with the defaults."""
    sample = training_sampler(8, torch.Generator().manual_seed(TRAIN_SEED), **std)
    padded = padded_training_sampler(8, torch.Generator().manual_seed(TRAIN_SEED + 1), **std)
    test = sample_populations(64, 100, torch.Generator().manual_seed(TEST_SEED), **std)
    points = torch.linspace(-2, 2, 11, dtype=torch.float64)[:, None].expand(11, 2)
    return {"training": _digest([t for _ in range(5) for t in sample()[:2]]),
            "padded": _digest([t for _ in range(3) for t in padded()]),
            "test": _digest([test.x, test.weights, test.means]),
            "density": _digest([mixture_log_density(points, test.weights[0], test.means[0], **std)])}


def test_the_default_streams_are_the_committed_runs_streams() -> None:
    assert COMPONENT_STD == 0.7
    assert _streams() == FINGERPRINTS
    assert _streams(std=0.7) == FINGERPRINTS
    committed = json.loads(results_file("mixture-medium.json").read_text())["test_set"]
    weights = fixed_test_set(committed["populations"], 100, TEST_SEED).smaller_weight
    assert weights.tolist() == committed["smaller_weights"]


def test_std_scales_the_same_noise_and_nothing_else() -> None:
    """x = mu + std * noise with the same draws at every std: the noise recovered from two spreads is
    standard normal and predicts the third, and weights and means do not move."""
    p5, p6, p7 = (fixed_test_set(64, 100, TEST_SEED, std) for std in (0.5, 0.6, 0.7))
    assert torch.equal(p5.weights, p7.weights) and torch.equal(p5.means, p7.means)
    noise = (p7.x.double() - p6.x.double()) / 0.1
    assert abs(float(noise.mean())) < 0.05 and abs(float(noise.std()) - 1) < 0.05
    np.testing.assert_allclose(p5.x.double(), p7.x.double() - 0.2 * noise, atol=2e-5)
    means = p7.x.double() - 0.7 * noise                    # each particle's component mean
    assert float((p5.x.double() - means).std()) == pytest.approx(0.5, rel=0.05)
    x5, y5, _ = mixture_batch(16, 40, torch.Generator().manual_seed(1), std=0.5)
    x7, y7, _ = mixture_batch(16, 40, torch.Generator().manual_seed(1))
    assert torch.equal(y5, y7) and not torch.equal(x5, x7)
    narrow, _, _ = training_sampler(4, torch.Generator().manual_seed(2), std=0.5)()
    wide, _, _ = training_sampler(4, torch.Generator().manual_seed(2))()
    assert narrow.shape == wide.shape and float(narrow.std()) < float(wide.std())


def test_the_log_density_uses_std() -> None:
    weights, means = torch.tensor([0.3, 0.7], dtype=torch.float64), torch.tensor([[1.0, 0.0], [-1.0, 0.0]],
                                                                                 dtype=torch.float64)
    point = torch.tensor([0.2, -0.4], dtype=torch.float64)
    for std in (0.5, 0.7):
        squared = ((point - means) ** 2).sum(-1)
        expected = np.log(float((weights * torch.exp(-squared / (2 * std ** 2)) / (2 * np.pi * std ** 2)).sum()))
        assert float(mixture_log_density(point, weights, means, std)) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="std must be positive"):
        mixture_log_density(point, weights, means, 0.0)


def test_the_sweeps_training_and_metric_take_std() -> None:
    """``train_model`` and ``evaluate_metric`` at the default equal them at an explicit 0.7, and differ at 0.5."""
    spreads = ({}, {"std": 0.7}, {"std": 0.5})
    runs = [train_model("plain/plain", "mean", "mean", 0, TINY, progress=False, **kw) for kw in spreads]
    assert list(runs[0][1]) == list(runs[1][1]) and list(runs[0][1]) != list(runs[2][1])
    default, explicit, other = (evaluate_metric(runs[0][0], TINY, **kw) for kw in spreads)
    assert default == explicit
    assert default["metric_per_population"] != other["metric_per_population"]


@pytest.fixture(scope="module")
def probe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The probe at the QUICK budget: one configuration, one seed, two sigmas."""
    out = tmp_path_factory.mktemp("probe") / "sigma.json"
    subprocess.run([sys.executable, str(ROOT / "scripts/probes/mixture_sigma_models.py"), "--budget", "quick",
                    "--configurations", "mean/mean", "--seeds", "1", "--sigmas", "0.5", "0.7", "--out", str(out)],
                   check=True, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=300)
    return out


def test_the_probe_writes_a_file_the_reader_accepts(probe_file: Path) -> None:
    results = load_sensitivity(probe_file)
    assert results["probe"] == PROBE and results["complete"] and results["budget"] == "quick"
    assert results["sigmas"] == [0.5, 0.7] and results["mixture"]["component_std"] == [0.5, 0.7]
    assert results["git_commit"] and results["command"][0].endswith("mixture_sigma_models.py")
    assert results["wall_seconds"] > 0 and results["started"] <= results["finished"]
    runs = [(r["sigma"], r["spec"], r["seed"]) for r in results["runs"]]
    assert runs == [(0.5, "mean/mean", 0), (0.7, "mean/mean", 0)]
    ems = [r["em_mae"] for r in results["references"]]
    assert ems[0] < ems[1]                               # EM errs more at the wider spread
    assert all(r["error"] is None and np.isfinite(r["metric"]) for r in results["runs"])
    assert results["runs"][0]["test_mae"] != results["runs"][1]["test_mae"]
    rows = sensitivity_table(results)
    assert [(r["sigma"], r["spec"], r["used"]) for r in rows] == [(0.5, "mean/mean", 1), (0.7, "mean/mean", 1)]
    assert all(r["verdict"] == "undecided with 1 seed" for r in rows)
    assert [r["metric"] for r in rows] == [r["metric"] for r in results["runs"]]
    assert [r["em_mae"] for r in rows] == ems
    for quantity in QUANTITIES:
        assert len(run_values(results, quantity)) == 2


def _probe_like(seeds: dict[tuple[float, str], list[float]], em_mae: float = 0.1) -> dict:
    """A minimal file of the probe's shape whose runs have these metric values per (sigma, spec)."""
    sigmas = sorted({sigma for sigma, _ in seeds})
    specs = list(dict.fromkeys(spec for _, spec in seeds))
    runs = [{"sigma": sigma, "spec": spec, "seed": seed, "setting": "plain/plain", "equivariant": "mean",
             "final": "mean", "error": None, "collapsed": False, "metric": value, "test_mae": em_mae + value / 10,
             "metric_by_population_size": {"100": value}, "metric_per_population": {"100": [value, value]}}
            for (sigma, spec), values in seeds.items() for seed, value in enumerate(values)]
    return {"probe": PROBE, "budget": "medium", "budget_parameters": {}, "configurations": specs,
            "seeds": sorted({r["seed"] for r in runs}), "sigmas": sigmas, "complete": True, "runs": runs,
            "references": [{"sigma": s, "em_mae": em_mae, "constant": 0.275, "constant_mae": 0.11} for s in sigmas]}


def test_three_seeds_decide_nothing_and_enough_seeds_do() -> None:
    three = em_comparison(_probe_like({(0.5, "mean/mean"): [-0.3, -0.2, -0.4], (0.7, "mean/mean"): [0.1, 0.2, 0.3]}))
    assert smallest_p_value(3, "two-sided") == 0.25
    assert [r["verdict"] for r in three] == ["undecided with 3 seeds"] * 2
    # three seeds: the median's order-statistic interval is unbounded, and no test can pass Holm's first step
    assert all(r["p"] == 0.25 and r["detectable"] == np.inf and r["high"] == np.inf for r in three[:1])
    assert three[0]["difference"] == pytest.approx(-0.3)                  # the median of d, not its mean
    assert seeds_needed(2) == 7 and seeds_needed(9) == 9
    many = {(0.5, "mean/mean"): list(np.linspace(-0.5, -0.1, 8)), (0.7, "mean/mean"): list(np.linspace(0.1, 0.5, 8))}
    rows = em_comparison(_probe_like(many))
    assert [r["verdict"] for r in rows] == ["model better than EM", "EM better than model"]
    assert [r["adjusted"] for r in rows] == [2 / 2 ** 8 * 2] * 2
    mixed = em_comparison(_probe_like({(0.5, "mean/mean"): [-0.1, 0.2, -0.1, 0.1, -0.2, 0.1, 0.1, -0.1]}))
    assert mixed[0]["verdict"] == "undecided"
    mae = em_comparison(_probe_like({(0.5, "mean/mean"): [-0.3, -0.2, -0.4]}), "test_mae")[0]
    assert mae["em"] == 0.1 and mae["difference"] == pytest.approx(-0.03)


def test_a_collapsed_run_is_counted_and_left_out() -> None:
    results = _probe_like({(0.5, "mean/mean"): [-0.3, -0.2, -0.4]})
    results["runs"][1]["collapsed"] = True
    row = em_comparison(results)[0]
    assert (row["runs"], row["used"], row["verdict"]) == (3, 2, "undecided with 2 seeds")
    assert row["model"] == pytest.approx(-0.35)


def _write(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "sigma.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.mark.parametrize("break_it, message", [
    (lambda r: "{", "not JSON"),
    (lambda r: {**r, "probe": "other"}, "not the file of the probe"),
    (lambda r: {k: v for k, v in r.items() if k != "references"}, "lacks references"),
    (lambda r: {**r, "sigmas": [0.5, -1]}, "not a list of positive"),
    (lambda r: {**r, "references": r["references"][:1]}, "one record of sigma"),
    (lambda r: {**r, "runs": []}, "has no runs"),
    (lambda r: {**r, "runs": [{**r["runs"][0], "sigma": 0.9}]}, "run 0 has sigma 0.9"),
    (lambda r: {**r, "runs": r["runs"] + r["runs"][:1]}, "one record per configuration and seed"),
    (lambda r: {**r, "runs": [{k: v for k, v in r["runs"][0].items() if k != "metric"}]}, "lacks metric"),
])
def test_the_reader_refuses_a_broken_file_naming_it(tmp_path: Path, break_it, message: str) -> None:
    path = _write(tmp_path, break_it(_probe_like({(0.5, "mean/mean"): [-0.3], (0.7, "mean/mean"): [0.1]})))
    with pytest.raises(ValueError, match=message) as error:
        load_sensitivity(path)
    assert str(path) in str(error.value) and "mixture_sigma_models.py" in str(error.value)


def test_the_reader_says_how_to_write_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="mixture_sigma_models.py"):
        load_sensitivity(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="quantity must be one of"):
        run_values(_probe_like({(0.5, "mean/mean"): [-0.3]}), "nll")
    with pytest.raises(ValueError, match="claims must be a positive int"):
        seeds_needed(0)


def test_the_committed_probe_file_holds_every_run() -> None:
    """``results/probes/mixture-sigma-models.json``, which chapter 9 reads: complete, at the MEDIUM
    budget, every configuration with every seed at every sigma, and nothing collapsed or diverged."""
    results = load_sensitivity(results_file(RESULTS_NAME))
    assert results["complete"] and results["budget"] == "medium" and results["sigmas"] == list(SIGMAS)
    keys = sorted((r["sigma"], r["spec"], r["seed"]) for r in results["runs"])
    assert keys == sorted((s, c, seed) for s in SIGMAS for c in results["configurations"] for seed in results["seeds"])
    assert all(row["used"] == len(results["seeds"]) for row in sensitivity_table(results))
