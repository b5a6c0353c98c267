"""The point-cloud experiment (Section 4.3): the classifier, the training schedule (Adam's epsilon
and learning-rate milestones in ``fit``), one run, the learning signal, the sweep's results file,
Table 2 and the command line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
import trimesh

import setfuncs as sf
from setfuncs.equivariant import Equivariant
from setfuncs.experiments.engine import Engine
from setfuncs.experiments.pointcloud import (BUDGETS, FULL, MEDIUM, QUICK, Budget, Data, PointCloudClassifier,
                                             accuracy_curves, evaluation_sizes, format_table, load_results,
                                             milestones, paper_rows, points_per_test_cloud, pointcloud_table,
                                             run_one, sweep, EXPERIMENT)
from setfuncs.experiments.pointcloud.sweep import data_identity
from setfuncs.experiments.pointcloud.__main__ import main
from setfuncs.experiments.results import RESULTS_DIR
from setfuncs.experiments.sweeps import TrainingBudget
from setfuncs.train import fit

PAPER = RESULTS_DIR / "paper-results.json"
TINY = Budget("tiny", steps=6, batch=8, lr=1e-3, clip=5.0, hidden=8, equivariant_layers=2, recurrent_steps=2,
              test_size=2, points=40, train_per_class=2, eps=1e-8, curve_sizes=(10, 60))


class _Scalar(torch.nn.Module):
    """A model whose output is one parameter ``w``: Adam's steps on it show the learning rate."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.w


def test_fit_takes_adams_epsilon_and_a_step_schedule() -> None:
    """With a constant gradient g, Adam moves by lr * g / (|g| + eps) per step: eps = g halves the
    step, and milestones [2, 4] with gamma 0.1 give steps of lr, lr, lr/10, lr/10, lr/100."""
    def run(g: float, **kwargs) -> float:
        model = _Scalar()
        fit(model, lambda: (torch.zeros(1), torch.zeros(1), None), lambda p, y: g * p, steps=5, lr=1.0,
            progress=False, **kwargs)
        return model.w.item()

    assert run(1.0) == pytest.approx(-5.0, rel=1e-6)                               # the defaults are unchanged
    assert run(1e-3, eps=1e-3) == pytest.approx(-2.5, rel=1e-3)
    assert run(1.0, milestones=[2, 4], gamma=0.1) == pytest.approx(-2.21, rel=1e-6)
    assert milestones(1500, (0.4, 0.8)) == [600, 1200] and milestones(153_000, FULL.decay_at) == [61_200, 122_400]


def test_the_classifier_follows_the_reference() -> None:
    torch.manual_seed(0)
    model = PointCloudClassifier(40, "max/max")
    assert [(layer.in_features, layer.out_features) for layer in model.combine] == [(3, 256), (256, 256), (256, 256)]
    assert all(type(layer) is Equivariant for layer in model.combine)
    dropouts = [m.p for m in model.process if isinstance(m, torch.nn.Dropout)]
    linears = [(m.in_features, m.out_features) for m in model.process if isinstance(m, torch.nn.Linear)]
    assert dropouts == [0.5, 0.5] and linears == [(256, 256), (256, 40)]
    assert isinstance(model.process[2], torch.nn.Tanh)


@pytest.mark.parametrize("spec", sf.TABLE2_SPECS)
def test_every_column_is_invariant_to_particle_order(spec: str) -> None:
    torch.manual_seed(0)
    model = PointCloudClassifier(5, spec, hidden=8, equivariant_layers=2, steps=2).double().eval()
    x = torch.randn(3, 17, 3, dtype=torch.float64)
    logits = model(x)
    assert logits.shape == (3, 5) and torch.isfinite(logits).all()
    torch.testing.assert_close(model(x[:, torch.randperm(17)]), logits)
    assert not torch.allclose(model(x[[1, 2, 0]]), logits)


def test_budgets() -> None:
    assert set(BUDGETS) == {"quick", "medium", "full"}
    assert (FULL.hidden, FULL.equivariant_layers, FULL.batch, FULL.points, FULL.dropout) == (256, 3, 64, 1000, 0.5)
    assert (FULL.lr, FULL.weight_decay, FULL.eps, FULL.clip, FULL.decay_at, FULL.decay) == \
        (1e-3, 1e-7, 1e-3, 5.0, (0.4, 0.8), 0.1)
    assert MEDIUM.points == 1000 and points_per_test_cloud(MEDIUM) == 2000 and QUICK.steps < MEDIUM.steps < FULL.steps
    assert evaluation_sizes(TINY) == (10, 50, 60, 100, 1000) and points_per_test_cloud(TINY) == 1000
    for bad, message in ((dict(points=0), "points"), (dict(equivariant_layers=0), "equivariant_layers"),
                         (dict(dropout=1.0), "dropout"), (dict(decay_at=(0.8, 0.4)), "decay_at"),
                         (dict(curve_sizes=(10, 10)), "curve_sizes"), (dict(steps=0), "steps")):
        with pytest.raises(ValueError, match=message):
            replace(TINY, **bad)


def test_run_one_on_a_tiny_budget() -> None:
    record = run_one("max/r-lse", 0, TINY, Data())
    assert (record["spec"], record["equivariant"], record["final"]) == ("max/r-lse", "max", "r-lse")
    assert record["data"] == "shapes" and record["seed"] == 0
    assert record["error"] is None and record["train_seconds"] > 0 and record["eval_seconds"] > 0
    assert record["clouds_per_second"] == pytest.approx(TINY.steps * TINY.batch / record["train_seconds"])
    assert record["epochs"] == pytest.approx(TINY.steps * TINY.batch / (12 * TINY.train_per_class))
    assert record["parameters"] > 0 and np.isfinite(record["final_train_loss"])
    accuracies = record["accuracy_by_population_size"]
    assert list(accuracies) == ["10", "50", "60", "100", "1000"]
    assert all(0 <= a <= 1 for a in accuracies.values()) and record["accuracy"] == accuracies["1000"]
    # 24 test clouds: every accuracy is a multiple of 1/24
    assert all(abs(a * 24 - round(a * 24)) < 1e-9 for a in accuracies.values())
    assert run_one("max/r-lse", 0, TINY, Data())["final_train_loss"] == record["final_train_loss"]


def test_the_model_learns_above_chance() -> None:
    """max/max on the twelve offline shapes, 300 steps at width 32 on 100 particles (about 2 s):
    the test accuracy is far above chance (1/12; measured 0.61 at 100 particles)."""
    budget = replace(QUICK, name="learn", steps=300, dropout=0.0, curve_sizes=(100,))
    record = run_one("max/max", 0, budget, Data())
    assert record["accuracy_by_population_size"]["100"] > 0.35
    assert record["final_train_loss"] < 0.7 * np.log(12)


def test_a_modelnet_folder_runs_end_to_end(tmp_path: Path) -> None:
    root = tmp_path / "ModelNet40"
    for name, mesh in (("box", trimesh.creation.box()), ("cone", trimesh.creation.cone(1.0, 2.0))):
        for split, count in (("train", 8), ("test", 3)):
            (root / name / split).mkdir(parents=True)
            for i in range(count):
                mesh.export(root / name / split / f"{name}_{i:04d}.off", file_type="off")
    data = Data("modelnet40", str(root), str(tmp_path / "cache"))
    record = run_one("max/max", 0, replace(TINY, curve_sizes=(10,)), data)
    assert record["data"] == "modelnet40" and record["epochs"] == pytest.approx(6 * 8 / 16)
    assert all(0 <= a <= 1 and a * 6 == round(a * 6) for a in record["accuracy_by_population_size"].values())
    assert len(list((tmp_path / "cache").glob("modelnet40-*.npz"))) == 2    # train at 40, test at 1000 particles
    with pytest.raises(ValueError, match="needs root"):
        Data("modelnet40")
    with pytest.raises(ValueError, match="one of"):
        Data("modelnet10")


def one_error_line(err: str) -> str:
    """The one line of ``err`` that says ``error`` (the others are the sampling bars), which ends it."""
    lines = [line for line in err.strip().splitlines() if "error" in line]
    assert len(lines) == 1 and err.strip().endswith(lines[0]), err
    return lines[0]


def modelnet_folder(root: Path, classes: int, train: int = 8, test: int = 2) -> Path:
    """A ModelNet40-like folder of ``classes`` classes (a box, a cone, a cylinder, ...), ``train`` and
    ``test`` meshes of each (the same mesh, so only the counts and the class names differ)."""
    meshes = [("box", trimesh.creation.box()), ("cone", trimesh.creation.cone(1.0, 2.0)),
              ("cylinder", trimesh.creation.cylinder(0.5, 1.5))][:classes]
    for name, mesh in meshes:
        for split, count in (("train", train), ("test", test)):
            (root / name / split).mkdir(parents=True)
            for i in range(count):
                mesh.export(root / name / split / f"{name}_{i:04d}.off", file_type="off")
    return root


def test_a_resume_on_another_modelnet_folder_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A sitting on a ModelNet folder of 2 classes, then one on another folder of 3 into the same file:
    the second is refused (exit 2, one line naming the file and the data's identity) and the file keeps
    its runs; the first folder moved elsewhere (the same meshes) resumes it: the identity holds the meshes'
    digest, the provenance the folder's resolved path."""
    monkeypatch.setitem(BUDGETS, "quick", replace(TINY, name="quick", curve_sizes=(10,)))
    first, other = modelnet_folder(tmp_path / "A", 2), modelnet_folder(tmp_path / "B", 3)
    out = tmp_path / "r.json"
    common = ["sweep", "--budget", "quick", "--runs", "1", "--jobs", "1", "--data", "modelnet40",
              "--configurations", "max/max", "--no-progress", "--out", str(out)]
    main([*common, "--root", str(first), "--cache", str(tmp_path / "cache-A")])
    before = out.read_bytes()
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        main([*common, "--root", str(other), "--cache", str(tmp_path / "cache-B")])
    assert refused.value.code == 2
    line = one_error_line(capsys.readouterr().err)
    assert str(out) in line and "another sweep" in line and "data.classes: 2 in the file, 3 in this sweep" in line
    assert "data.meshes_sha256" in line
    assert out.read_bytes() == before
    written = json.loads(before)
    assert written["identity"]["data"]["name"] == "modelnet40" and written["identity"]["data"]["classes"] == 2
    assert len(written["identity"]["data"]["meshes_sha256"]) == 64 and "root" not in written["identity"]["data"]
    assert written["data"]["root"] == str(first.resolve())

    moved = tmp_path / "elsewhere" / "ModelNet"
    moved.parent.mkdir()
    first.rename(moved)
    main([*common, "--runs", "2", "--root", str(moved), "--cache", str(tmp_path / "cache-A")])   # one seed more
    assert "(this sitting: 1 new, 1 kept, 0 failed)" in capsys.readouterr().out
    resumed = json.loads(out.read_text())
    assert resumed["data"]["root"] == str(first.resolve())      # the header is the first sitting's (the engine keeps it)
    assert resumed["runs"][0] == written["runs"][0]
    assert resumed["identity"] == written["identity"] and len(resumed["runs"]) == 2


def test_a_modelnet_folder_of_less_than_one_batch_is_refused_up_front(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    """Two classes of three training meshes are 6 clouds, and a quick batch needs 32: one line names
    the folder, the clouds of each split and the batch, and says what to change; no run starts and no
    file is written (every run used to fail, with the advice to run the same command again)."""
    root = modelnet_folder(tmp_path / "ModelNet40", 2, train=3, test=1)
    out = tmp_path / "r.json"
    with pytest.raises(SystemExit) as stopped:
        main(["sweep", "--budget", "quick", "--runs", "1", "--jobs", "1", "--data", "modelnet40", "--root", str(root),
              "--configurations", "max/max", "--no-progress", "--out", str(out)])
    assert stopped.value.code == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.endswith(f"error: --root {root}: the ModelNet40 folder {root.resolve()} holds 6 training and 2 test "
                         f"clouds (2 classes), fewer training clouds than one batch of the quick budget needs (32), so "
                         f"no run can train on it: add meshes to its <class>/train folders (<root>/<class>/{{train,test}}/"
                         f"*.off, e.g. <root>/airplane/train/airplane_0001.off; the whole of ModelNet40 has 9,843 "
                         f"training meshes), or use a budget whose batch is at most 6")
    assert "same command" not in line and not out.exists()
    with pytest.raises(ValueError, match="raise train_per_class to at least 3, or lower the batch to at most 24"):
        sweep(1, replace(TINY, batch=32), tmp_path / "s.json", ["max/max"], Data(), engine=Engine(jobs=1), progress=False)
    assert not (tmp_path / "s.json").exists()


def test_sweep_writes_results_with_provenance(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "pointcloud.json"
    sweep(1, TINY, out, ["max/max", "r-sum/r-sum"], Data(), engine=Engine(jobs=1), progress=False)
    results = json.loads(out.read_text())
    for key in ("command", "cwd", "budget", "budget_parameters", "seeds", "versions", "hardware", "started",
                "finished", "wall_seconds", "configurations", "seed_scheme", "data", "preprocessing", "model",
                "optimizer", "evaluation"):
        assert results[key] is not None, key
    assert "git_commit" in results and results["experiment"] == "point_cloud_classification"
    assert results["complete"] is True and results["budget"] == "tiny"
    assert results["identity"]["data"] == {"name": "shapes", "classes": 12, "train_clouds": 24, "test_clouds": 24,
                                           "generator_sha256": data_identity(Data(), TINY)["generator_sha256"]}
    assert len(results["identity"]["data"]["generator_sha256"]) == 64
    assert results["data"]["name"] == "shapes" and results["data"]["classes"] == 12
    assert (results["data"]["train_clouds"], results["data"]["test_clouds"]) == (24, 24)
    assert (results["data"]["train_points"], results["data"]["test_points"]) == (40, 1000)
    assert results["optimizer"]["lr_milestones"] == [2, 5] and results["optimizer"]["eps"] == 1e-8
    assert set(results["versions"]) >= {"setfuncs", "torch", "numpy", "trimesh", "python"}
    assert sorted(r["spec"] for r in results["runs"]) == ["max/max", "r-sum/r-sum"]
    assert all(r["error"] is None and 0 <= r["accuracy"] <= 1 for r in results["runs"])
    assert sorted(p.name for p in out.parent.iterdir()) == ["pointcloud.json", "pointcloud.json.lock"]

    rows = pointcloud_table(load_results(out), PAPER)
    assert [r["spec"] for r in rows] == ["max/max", "r-sum/r-sum"] and all(r["runs"] == 1 for r in rows)
    assert rows[0]["paper_1000"] == pytest.approx(0.873) and rows[1]["paper_50"] == pytest.approx(0.61)
    top = next(r for r in results["runs"] if r["spec"] == "max/max")
    expected = None if top["collapsed"] else top["accuracy_by_population_size"]["100"]
    assert rows[0]["collapsed"] == int(top["collapsed"]) and rows[0]["mean_100"] == rows[0]["best_100"] == expected
    usable = sum(not r["collapsed"] for r in results["runs"])                 # collapsed runs draw no curve
    assert [c["sizes"] for c in accuracy_curves(results)] == [[10, 50, 60, 100, 1000]] * usable
    assert all(c["runs"] == c["of"] == 1 for c in accuracy_curves(results))  # one run per column, kept
    for run in results["runs"]:
        run["collapsed"] = False
    assert [c["sizes"] for c in accuracy_curves(results)] == [[10, 50, 60, 100, 1000]] * 2


def test_tasks_and_sweep_refusals(tmp_path: Path) -> None:
    specs, tasks = EXPERIMENT.tasks(2, TINY, None, Data())
    assert specs == [*sf.TABLE2_SPECS, "max/r-lme", "r-lme/r-lme"] and len(tasks) == 24
    assert [t.seed for t in tasks] == [0] * 12 + [1] * 12 and tasks[0].args == ("max/max", 0, TINY, Data(), False, "cpu")
    with pytest.raises(ValueError, match="unknown or no configurations"):
        sweep(1, TINY, tmp_path / "x.json", configurations=["mean/mean"])
    with pytest.raises(ValueError, match="runs"):
        sweep(0, TINY, tmp_path / "x.json")
    with pytest.raises(ValueError, match="point-cloud Budget"):
        sweep(1, TrainingBudget("x", 1, 1, 1e-3, 1.0, 4, 1, 1, 1), tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def _run(spec: str, seed: int, acc: float | None) -> dict:
    return {"spec": spec, "seed": seed, "error": None if acc is not None else "diverged",
            "accuracy": acc, "accuracy_by_population_size": None if acc is None else
            {"50": acc / 2, "100": acc - 0.1, "1000": acc}}


SYNTHETIC = {"experiment": "point_cloud_classification", "complete": True, "budget": "medium",
             "budget_parameters": {}, "configurations": ["max/max", "r-lse/r-lse"], "seeds": [0, 1],
             "runs_per_configuration": 2,
             "data": {"name": "shapes", "classes": 12, "train_clouds": 1200, "test_clouds": 600},
             "runs": [_run("r-lse/r-lse", 0, 0.5), _run("max/max", 0, 0.8), _run("max/max", 1, 0.6),
                      _run("r-lse/r-lse", 1, None)]}


def test_table_means_bests_and_paper() -> None:
    rows = pointcloud_table(SYNTHETIC, PAPER)
    assert [r["spec"] for r in rows] == ["max/max", "r-lse/r-lse"]             # the paper's column order
    top, rlse = rows
    assert top["mean_1000"] == pytest.approx(0.7) and top["best_1000"] == pytest.approx(0.8)
    assert top["mean_50"] == pytest.approx(0.35) and top["best_100"] == pytest.approx(0.7)
    assert (rlse["runs"], rlse["diverged"], rlse["mean_1000"]) == (2, 1, 0.5)
    assert rlse["paper_1000"] == pytest.approx(0.78) and top["paper_100"] == pytest.approx(0.665)
    assert paper_rows(PAPER)["max/r-lse"] == pytest.approx({1000: 0.858, 100: 0.753, 50: 0.628})
    text = format_table(rows)
    assert len(text.splitlines()) == 3 and "70.0%" in text and "87.3%" in text and "paper 50" in text
    assert pointcloud_table(SYNTHETIC)[0]["paper_1000"] is None


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(SYNTHETIC))
    main(["table", str(path), "--paper", str(PAPER)])
    out = capsys.readouterr().out
    assert "ours: test accuracy on the offline shapes (12 classes, 1200 training and 600 test clouds)" in out
    assert "paper: test accuracy on ModelNet40" in out and "max/max" in out and "87.3%" in out
    assert "1000: 70.0%" in out

    def usage_error(argv: list[str]) -> str:
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        return capsys.readouterr().err

    out_args = ["--out", str(tmp_path / "x.json")]
    assert "needs --root" in usage_error(["sweep", "--budget", "quick", "--runs", "1", "--data", "modelnet40",
                                          *out_args])
    assert "is not a folder" in usage_error(["sweep", "--budget", "quick", "--runs", "1", "--data", "modelnet40",
                                             "--root", str(tmp_path / "nowhere"), *out_args])
    assert "for --data modelnet40" in usage_error(["sweep", "--budget", "quick", "--runs", "1", "--root",
                                                   str(tmp_path), *out_args])
    assert "invalid choice: 'mean/mean'" in usage_error(["sweep", "--budget", "quick", "--runs", "1",
                                                         "--configurations", "mean/mean", *out_args])
    assert "invalid choice: 'tiny'" in usage_error(["sweep", "--budget", "tiny", "--runs", "1", *out_args])
    assert "positive integer" in usage_error(["sweep", "--budget", "quick", "--runs", "0", *out_args])
    assert "no such file" in usage_error(["table", str(tmp_path / "missing.json")])
    assert not (tmp_path / "x.json").exists()
    other = tmp_path / "mixture.json"
    other.write_text(json.dumps({"experiment": "gmm_mixture_weights", "runs": []}))
    with pytest.raises(SystemExit) as stopped:
        main(["table", str(other)])
    assert stopped.value.code == 2 and "not 'point_cloud_classification'" in capsys.readouterr().err


def test_command_line_sweep(tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BUDGETS, "quick", replace(TINY, name="quick"))
    out = tmp_path / "cli.json"
    main(["sweep", "--budget", "quick", "--runs", "1", "--jobs", "1", "--data", "shapes", "--configurations",
          "max/q-sum", "--out", str(out), "--no-progress"])
    assert "1 runs in" in capsys.readouterr().out
    results = load_results(out)
    assert results["budget"] == "quick" and [r["spec"] for r in results["runs"]] == ["max/q-sum"]
