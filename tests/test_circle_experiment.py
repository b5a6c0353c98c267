"""The minimal enclosing circle experiment (Section 4.1): data and targets, one run, the learning
signal, the sweep's results file and Table 1's statistics."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from setfuncs.experiments.engine import Engine
from setfuncs.experiments.circle import (BUDGETS, MEDIUM, QUICK, Budget, by_population_size,
                                         circle_batch, circle_table, format_table,
                                         min_enclosing_circles, run_one, sample_populations, sweep,
                                         train_model)
from setfuncs.experiments.circle.data import test_set as fixed_test_set
from setfuncs.experiments.circle.__main__ import main

TINY = Budget("tiny", steps=20, batch=16, lr=1e-2, clip=1.0, hidden=8, equivariant_layers=1,
              recurrent_steps=2, test_size=64, test_population_sizes=(5, 20))


def test_populations_and_targets() -> None:
    x, y, mask = circle_batch(8, generator=torch.Generator().manual_seed(0))
    assert x.shape == (8, 20, 2) and x.dtype == torch.float32
    assert y.shape == (8, 3) and y.dtype == torch.float32 and mask is None
    centers, radii = min_enclosing_circles(x)
    torch.testing.assert_close(y, torch.cat([centers, radii[:, None]], 1))
    assert sample_populations(3, 7).shape == (3, 7, 2)


def test_populations_are_seeded() -> None:
    a = sample_populations(4, generator=torch.Generator().manual_seed(1))
    b = sample_populations(4, generator=torch.Generator().manual_seed(1))
    c = sample_populations(4, generator=torch.Generator().manual_seed(2))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert torch.equal(fixed_test_set(16, 10, 3)[0], circle_batch(16, 10, torch.Generator().manual_seed(3))[0])


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_sizes(bad) -> None:
    with pytest.raises(ValueError, match="positive int"):
        sample_populations(bad)
    with pytest.raises(ValueError, match="positive int"):
        sample_populations(2, n=bad)


def test_run_one_on_a_tiny_budget() -> None:
    record = run_one("recurrent/plain", "lse", "max", seed=0, budget=TINY)
    assert record["spec"] == "r-lse/max" and record["setting"] == "recurrent/plain"
    assert record["error"] is None and record["train_seconds"] > 0
    for key in ("mse", "radius_mse", "center_mse", "final_train_loss"):
        assert np.isfinite(record[key])
    assert record["mse"] == pytest.approx(record["radius_mse"] + record["center_mse"])
    assert set(record["mse_by_population_size"]) == {"5", "20"}
    assert record["mse_by_population_size"]["20"] == record["mse"]
    assert run_one("recurrent/plain", "lse", "max", seed=0, budget=TINY)["mse"] == record["mse"]


def test_train_model_is_the_training_of_run_one() -> None:
    """The chapter's live models and the sweep's runs come from the same seeded training."""
    model, losses = train_model("plain/recurrent", "mean", "lse", seed=3, budget=TINY, progress=False)
    assert len(losses) == TINY.steps and not model.training
    x, y, _ = fixed_test_set(TINY.test_size, 20, 2019)
    with torch.no_grad():
        mse = ((model(x)[:, 2] - y[:, 2]) ** 2).mean() + ((model(x)[:, :2] - y[:, :2]) ** 2).sum(1).mean()
    assert run_one("plain/recurrent", "mean", "lse", seed=3, budget=TINY)["mse"] == pytest.approx(float(mse))


def test_budgets_grow_from_quick_to_full() -> None:
    assert list(BUDGETS) == ["quick", "medium", "full"]
    assert QUICK.steps < MEDIUM.steps < BUDGETS["full"].steps
    assert QUICK.hidden < MEDIUM.hidden < BUDGETS["full"].hidden
    assert min(MEDIUM.test_population_sizes) == 5 and max(MEDIUM.test_population_sizes) == 100


def test_run_one_refuses_unknown_configurations() -> None:
    with pytest.raises(ValueError, match="setting"):
        run_one("plain", "max", "max", 0, TINY)
    with pytest.raises(ValueError, match="final aggregation"):
        run_one("plain/plain", "max", "sum", 0, TINY)
    with pytest.raises(ValueError, match="test_population_sizes"):
        Budget("bad", 1, 1, 1e-3, 1.0, 4, 1, 1, 4, test_population_sizes=(5, 10))


def test_the_model_learns() -> None:
    """After QUICK's 300 steps, max/max beats predicting the mean training target by far
    (measured: 0.26 against 4.2, about 16x)."""
    budget = replace(QUICK, name="learn", test_population_sizes=(20,))
    record = run_one("plain/plain", "max", "max", seed=0, budget=budget)
    _, y_train, _ = circle_batch(4096, generator=torch.Generator().manual_seed(5))
    _, y, _ = fixed_test_set(budget.test_size, 20, 2019)
    constant = ((y - y_train.mean(0)) ** 2).sum(1).mean().item()
    assert record["mse"] < 0.25 * constant


def test_sweep_writes_results_with_provenance(tmp_path: Path, in_process_scheduler: str) -> None:
    out = tmp_path / "sub" / "circle.json"
    sweep(1, TINY, out, configurations=["max/max", "r-mean/lse"], engine=Engine(scheduler=in_process_scheduler),
          progress=False)
    results = json.loads(out.read_text())
    for key in ("command", "budget", "budget_parameters", "seeds", "versions", "hardware", "started",
                "finished", "wall_seconds", "mixture", "configurations", "seed_scheme"):
        assert results[key] is not None, key
    assert results["complete"] is True and results["budget"] == "tiny"
    assert set(results["versions"]) >= {"setfuncs", "torch", "numpy", "python"}
    assert set(results["hardware"]) >= {"machine", "processor", "cpu_count", "cpu_model"}
    assert sorted(r["spec"] for r in results["runs"]) == ["max/max", "r-mean/lse"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["circle.json", "circle.json.lock"]
    assert results["git_commit"] is None or len(results["git_commit"].removesuffix("-dirty")) == 40


def test_sweep_refuses_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown"):
        sweep(1, TINY, tmp_path / "x.json", configurations=["max/sum"])
    with pytest.raises(ValueError, match="runs"):
        sweep(0, TINY, tmp_path / "x.json")


def _run(setting: str, mse: float, seed: int, spec: str = "max/max") -> dict:
    equivariant, final = (part.removeprefix("r-") for part in spec.split("/"))
    return {"setting": setting, "spec": spec, "equivariant": equivariant, "final": final, "seed": seed, "mse": mse,
            "radius_mse": mse / 4,
            "center_mse": 3 * mse / 4, "error": None,
            "mse_by_population_size": {"20": mse, "5": 2 * mse, "100": 3 * mse}}


SYNTHETIC = {"experiment": "minimal_enclosing_circle", "budget": "tiny", "budget_parameters": {},
             "configurations": ["max/max", "max/r-max", "r-lse/r-lse"], "seeds": [0, 1, 2], "runs_per_configuration": 3,
             "complete": True, "runs": [
    _run("plain/plain", 1.0, 0), _run("plain/plain", 2.0, 1),
    _run("plain/recurrent", 3.0, 0, "max/r-max"),
    {**_run("plain/recurrent", 0.0, 1, "max/r-max"), "mse": None, "error": "diverged"},
    *(_run("recurrent/recurrent", 0.5, s, "r-lse/r-lse") for s in range(3)),
]}


def test_table_of_known_runs(tmp_path: Path) -> None:
    paper = tmp_path / "paper.json"
    paper.write_text(json.dumps({"provenance": {}, "paper": {"minimal_enclosing_circle": {
        "columns": ["best_mse", "radius_mse", "center_mse", "median_best_mse"],
        "rows": {"plain equivariant / plain aggregation": [2.0, 0.5, 1.5, 4.0],
                 "plain equivariant / recurrent aggregation": [1.0, 0.1, 0.9, 1.0],
                 "recurrent equivariant / plain aggregation": [1.0, 0.1, 0.9, 1.0],
                 "recurrent equivariant / recurrent aggregation": [0.5, 0.1, 0.4, 1.0]}}}}))
    rows = {r["setting"]: r for r in circle_table(SYNTHETIC, paper=paper)}
    assert list(rows) == ["plain/plain", "plain/recurrent", "recurrent/recurrent"]
    pp, pr, rr = rows["plain/plain"], rows["plain/recurrent"], rows["recurrent/recurrent"]
    # best of 20 draws from {1, 2} is 2 only with probability 2^-20: the median is 1
    assert (pp["best_mse"], pp["radius_mse"], pp["center_mse"], pp["median_best_mse"]) == (1.0, 0.25, 0.75, 1.0)
    assert (pr["runs"], pr["diverged"], pr["best_mse"], pr["best_spec"]) == (2, 1, 3.0, "max/r-max")
    assert (pr["best_mse_ratio"], pr["median_best_mse_ratio"]) == (3.0, 3.0)
    assert (rr["best_mse_ratio"], rr["median_best_mse"]) == (0.5, 0.5)
    assert (rr["paper_best_mse"], rr["paper_best_mse_ratio"], rr["paper_median_best_mse_ratio"]) == (0.5, 0.25, 0.25)
    # batches of one run: the median of the bootstrap is the median run
    three = {"runs": [_run("plain/plain", m, s) for s, m in enumerate([1.0, 2.0, 3.0])]}
    assert circle_table(three, batch_size=1)[0]["median_best_mse"] == 2.0
    assert "r-lse/r-lse" in format_table(list(rows.values()))


def test_best_runs_by_population_size() -> None:
    rows = by_population_size(SYNTHETIC)
    assert rows[0] == {"setting": "plain/plain", "spec": "max/max", "seed": 0, "sizes": [5, 20, 100],
                       "mse": [2.0, 1.0, 3.0]}


def test_command_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(SYNTHETIC))
    main(["table", str(path)])
    assert "plain/recurrent" in capsys.readouterr().out
    for argv in (["sweep", "--budget", "quick", "--runs", "0", "--out", "x.json"],
                 ["sweep", "--budget", "huge", "--runs", "1", "--out", "x.json"],
                 ["sweep", "--budget", "quick", "--runs", "1", "--out", "x.json", "--configurations", "max/sum"],
                 ["table", str(tmp_path / "missing.json")]):
        with pytest.raises(SystemExit):
            main(argv)
