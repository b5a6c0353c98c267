"""The run protocol (:mod:`setfuncs.experiments.protocol`) and the results schema
(:mod:`setfuncs.experiments.schema`) that every experiment's runs follow.

Properties: a learning curve is the window means of the losses; a run's record holds its training
summary and keeps its experiment's schema whether it trained, diverged in training, or gave
non-finite predictions; a finished run's state is one of four, told apart in one place; a file that
breaks the schema (duplicated runs, seeds that are not non-negative ints, metrics that are not
numbers, malformed header fields) is refused when a chapter reads it, naming the run and the field.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import setfuncs as sf
from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.protocol import (FINAL_LOSS_STEPS, diverged_record, learning_curve, run_protocol,
                                           training_record)
from setfuncs.experiments.schema import (RunSchema, SchemaError, check_results, finished_runs, run_status,
                                         status_counts, trained_runs)
from setfuncs.steps import TrainingLog

EXPERIMENTS = {"circle": circle, "mixture": mixture, "pointcloud": pointcloud, "attention": attention}


# -- the learning curve ------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=400), st.integers(1, 120))
def test_a_learning_curve_is_the_mean_of_consecutive_windows(losses: list[float], points: int) -> None:
    curve = learning_curve(losses, points)
    width = math.ceil(len(losses) / points)
    brute = [np.mean(losses[i:i + width]) for i in range(0, len(losses), width)]
    assert len(curve["steps"]) == len(curve["loss"]) <= points
    assert curve["steps"][-1] == len(losses) and curve["steps"] == sorted(set(curve["steps"]))
    np.testing.assert_allclose(curve["loss"], brute, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_a_learning_curve_needs_a_positive_number_of_points(bad: object) -> None:
    with pytest.raises(ValueError, match="points must be a positive int"):
        learning_curve([1.0, 2.0], bad)


def test_a_learning_curve_needs_losses() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        learning_curve([])


def test_the_training_record_summarises_the_log() -> None:
    log = TrainingLog([float(t) for t in range(300)], device="cpu", graphed=0)
    record = training_record(log, 2.5)
    assert record["train_seconds"] == 2.5 and record["training"] == log.describe()
    assert record["final_train_loss"] == np.mean(range(300 - FINAL_LOSS_STEPS, 300))
    assert record["learning_curve"] == learning_curve(log)


# -- one run: trained, diverged, broken evaluation ---------------------------------------------

SCHEMA = RunSchema(metrics=("score",), maps=("score_by_size",), fields=("kind",), details=("extra",))


def _trained() -> tuple[torch.nn.Module, TrainingLog]:
    return torch.nn.Linear(1, 1), TrainingLog([3.0, 2.0, 1.0])


def _diverges() -> tuple[torch.nn.Module, TrainingLog]:
    raise FloatingPointError("the loss became nan after 7 steps")


def test_a_trained_run_is_recorded_with_its_metrics_and_curve() -> None:
    record = run_protocol({"spec": "max/max", "seed": 0, "kind": "a"}, SCHEMA, _trained,
                          lambda model: {"score": 1.0, "score_by_size": {"5": 1.0}, "extra": 2})
    assert run_status(record) == "trained" and record["error"] is None and record["eval_seconds"] >= 0
    assert record["learning_curve"] == {"steps": [1, 2, 3], "loss": [3.0, 2.0, 1.0]}
    check_results({"runs": [record]}, "x.json", SCHEMA)


def test_a_diverged_training_is_recorded_with_every_metric_null() -> None:
    record = run_protocol({"spec": "max/max", "seed": 0}, SCHEMA, _diverges, lambda model: pytest.fail("evaluated"))
    assert run_status(record) == "diverged" and record["error"] == "the loss became nan after 7 steps"
    assert all(record[key] is None for key in ("score", "score_by_size", "kind", "extra", "learning_curve"))
    assert record["train_seconds"] >= 0
    check_results({"runs": [record]}, "x.json", SCHEMA)


def test_non_finite_predictions_keep_the_training_record() -> None:
    def broken(model: torch.nn.Module) -> dict:
        raise FloatingPointError("3 of 8 estimates are NaN")

    record = run_protocol({"spec": "max/max", "seed": 0, "kind": "a"}, SCHEMA, _trained, broken)
    assert run_status(record) == "diverged" and record["error"] == "3 of 8 estimates are NaN"
    assert record["learning_curve"] is not None and record["final_train_loss"] == 2.0 and record["kind"] == "a"
    assert record["score"] is None


def test_another_error_of_the_evaluation_is_not_hidden() -> None:
    def bug(model: torch.nn.Module) -> dict:
        raise KeyError("score")

    with pytest.raises(KeyError):
        run_protocol({"spec": "max/max", "seed": 0}, SCHEMA, _trained, bug)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_experiments_diverged_run_keeps_its_schema(name: str) -> None:
    schema = EXPERIMENTS[name].RUN_SCHEMA
    record = diverged_record({"spec": "max/max", "seed": 3}, schema, FloatingPointError("boom"), train_seconds=1.0)
    check_results({"runs": [record]}, f"{name}.json", schema)
    assert run_status(record) == "diverged" and all(record[k] is None for k in (*schema.metrics, *schema.maps))


# -- the four states ---------------------------------------------------------------------------

RUNS = [{"spec": "a", "seed": 0, "error": None, "collapsed": False},
        {"spec": "a", "seed": 1, "error": None, "collapsed": True},
        {"spec": "a", "seed": 2, "error": "the loss became nan", "collapsed": None},
        {"spec": "a", "seed": 3, "error": "RuntimeError: x", "failure": {"kind": "raised", "traceback": ""}}]


def test_a_run_is_in_exactly_one_of_four_states() -> None:
    assert [run_status(r) for r in RUNS] == ["trained", "collapsed", "diverged", "failed"]
    assert status_counts(RUNS) == {"trained": 1, "collapsed": 1, "diverged": 1, "failed": 1}
    assert [r["seed"] for r in finished_runs({"runs": RUNS})] == [0, 1, 2]
    assert [r["seed"] for r in trained_runs(RUNS)] == [0]


# -- a file that breaks the schema is refused where a chapter reads it ----------------------------

def _valid_circle(tmp_path: Path) -> dict:
    run = {"spec": "max/max", "setting": "plain/plain", "equivariant": "max", "final": "max", "seed": 0,
           "error": None, "collapsed": False, "mse": 1.0, "radius_mse": 0.25, "center_mse": 0.75,
           "mse_by_population_size": {"20": 1.0}}
    return {"experiment": "minimal_enclosing_circle", "budget": "tiny", "budget_parameters": {},
            "configurations": ["max/max"], "seeds": [0, 1], "runs_per_configuration": 2, "complete": True,
            "runs": [run, {**run, "seed": 1, "mse": 2.0}]}


def _refused(results: dict, tmp_path: Path, match: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results))
    with pytest.raises(SchemaError, match=match):
        circle.load_results(path)


def test_a_valid_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_valid_circle(tmp_path)))
    assert len(circle.load_results(path)["runs"]) == 2


def test_a_duplicated_run_is_refused_not_counted_twice(tmp_path: Path) -> None:
    results = _valid_circle(tmp_path)
    results["runs"].append(dict(results["runs"][0]))
    _refused(results, tmp_path, r"runs 0 and 2 are both max/max seed 0; a file holds one record per")


@pytest.mark.parametrize("seed", ["0", True, -1, 1.0, None])
def test_a_seed_that_is_not_a_non_negative_int_is_refused(seed: object, tmp_path: Path) -> None:
    results = _valid_circle(tmp_path)
    results["runs"][1]["seed"] = seed
    _refused(results, tmp_path, r"run 1 \(max/max seed .*\): seed is .*, not a non-negative int")


@pytest.mark.parametrize("run, match", [("max/max", r"run 1 is a str, not a run's record"),
                                        ({"seed": 1}, r"run 1 .*: spec is None, not a model spec"),
                                        ({"spec": ["max", "max"], "seed": 1}, r"spec is \['max', 'max'\]")])
def test_a_malformed_run_is_refused_by_position(run: object, match: str, tmp_path: Path) -> None:
    results = _valid_circle(tmp_path)
    results["runs"][1] = run
    _refused(results, tmp_path, match)


@pytest.mark.parametrize("key, value", [("seeds", "01"), ("seeds", [0, -1]), ("configurations", None),
                                        ("sittings", None), ("sittings", ["x"])])
def test_a_malformed_header_field_is_refused_by_name(key: str, value: object, tmp_path: Path) -> None:
    results = {**_valid_circle(tmp_path), key: value}
    _refused(results, tmp_path, f"{key} is {value!r}".replace("[", r"\[").replace("]", r"\]"))


@pytest.mark.parametrize("value", ["0.5", [1.0], True])
def test_a_metric_that_is_not_a_number_is_refused(value: object, tmp_path: Path) -> None:
    results = _valid_circle(tmp_path)
    results["runs"][1]["mse"] = value
    _refused(results, tmp_path, r"run 1 \(max/max seed 1\): /mse is .*, not a number")


def test_a_null_metric_needs_the_writers_non_finite_entry(tmp_path: Path) -> None:
    results = _valid_circle(tmp_path)
    results["runs"][1]["mse_by_population_size"] = {"20": None}
    _refused(results, tmp_path, r"/mse_by_population_size/20 is null without a non_finite entry")
    results["runs"][1]["non_finite"] = {"/mse_by_population_size/20": "nan"}
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(results))
    assert math.isnan(circle.load_results(path)["runs"][1]["mse_by_population_size"]["20"])


def test_a_diverged_run_may_hold_null_metrics(tmp_path: Path) -> None:
    results = _valid_circle(tmp_path)
    results["runs"][1].update(mse=None, radius_mse=None, center_mse=None, mse_by_population_size=None,
                              error="the loss became nan")
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results))
    assert run_status(circle.load_results(path)["runs"][1]) == "diverged"


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_committed_results_file_keeps_its_schema(name: str) -> None:
    from setfuncs.experiments.results import results_file

    path = results_file(f"{name}-medium.json")
    check_results(json.loads(path.read_text()), path, EXPERIMENTS[name].RUN_SCHEMA)


# -- every experiment's run_one follows the protocol ------------------------------------------------

def _tiny_runs() -> dict:
    from dataclasses import replace

    return {
        "circle": lambda: circle.run_one("plain/plain", "max", "max", 0, replace(
            circle.QUICK, name="tiny", steps=12, hidden=8, test_size=16, test_population_sizes=(5, 20))),
        "mixture": lambda: mixture.run_one("plain/plain", "mean", "mean", 0, replace(
            mixture.QUICK, name="tiny", steps=12, hidden=8, test_size=3, test_population_sizes=(10, 100),
            bootstraps=5)),
        "pointcloud": lambda: pointcloud.run_one("max/max", 0, replace(
            pointcloud.QUICK, name="tiny", steps=6, batch=8, hidden=8, test_size=2, points=40, train_per_class=2,
            curve_sizes=(10, 60)), pointcloud.Data()),
    }


@pytest.mark.parametrize("name", ["circle", "mixture", "pointcloud"])
def test_every_experiments_run_records_its_learning_curve_and_keeps_its_schema(name: str) -> None:
    torch.set_num_threads(1)
    record = _tiny_runs()[name]()
    check_results({"runs": [record]}, f"{name}.json", EXPERIMENTS[name].RUN_SCHEMA)
    assert record["error"] is None and record["eval_seconds"] >= 0 and record["train_seconds"] > 0
    curve = record["learning_curve"]
    assert curve["steps"][-1] == len(curve["steps"]) and len(curve["loss"]) == len(curve["steps"])
    test = curve["test"]
    assert test["steps"][-1] == curve["steps"][-1] and len(test["values"]) == len(test["steps"]) >= 2
    assert all(math.isfinite(v) for v in test["values"])


# -- the test metric at checkpoints ------------------------------------------------------------------

@pytest.mark.parametrize("steps, count, expected", [(100, 5, [20, 40, 60, 80, 100]), (3, 5, [1, 2, 3]),
                                                    (7, 1, [7])])
def test_checkpoint_steps_are_evenly_spaced_and_end_at_the_last_step(steps: int, count: int,
                                                                      expected: list[int]) -> None:
    from setfuncs.experiments.protocol import checkpoint_steps

    assert checkpoint_steps(steps, count) == expected


def test_checkpoints_change_no_step_of_the_training_and_keep_the_random_generators() -> None:
    """An evaluation at a checkpoint that reseeds torch's generator (as the attention experiment's
    does) and draws from it leaves the training's random stream as it was: the losses with and
    without checkpoints are equal, step for step, for a model with dropout."""
    from setfuncs.experiments.protocol import Checkpoints, checkpoint_arguments, checkpoint_steps
    from setfuncs.train import fit

    def sample():
        x = torch.randn(16, 6, 1)
        return x, x.sum(1), None

    def metric(model: torch.nn.Module) -> float:
        torch.manual_seed(123)
        return float(model(torch.randn(8, 6, 1)).mean())

    runs, points = [], None
    for checkpoints in (None, Checkpoints("probe", checkpoint_steps(40, 4), metric)):
        torch.manual_seed(0)
        model = sf.DeepSet(1, 1, spec="max/max", hidden=8, dropout=0.5)
        runs.append(fit(model, sample, torch.nn.functional.mse_loss, 40, progress=False, read_every=15,
                        **checkpoint_arguments(checkpoints)))
        points = checkpoints
    assert runs[0] == runs[1]
    assert points.record()["steps"] == [10, 20, 30, 40] and len(points.record()["values"]) == 4


@pytest.mark.parametrize("bad", [[0], [41], [True], [2.5]])
def test_fit_refuses_a_checkpoint_outside_the_training(bad: list) -> None:
    from setfuncs.train import fit

    with pytest.raises(ValueError, match="checkpoints must be step counts from 1 to steps = 40"):
        fit(sf.DeepSet(1, 1, spec="max/max", hidden=4), lambda: (torch.randn(4, 3, 1), torch.randn(4, 1), None),
            torch.nn.functional.mse_loss, 40, progress=False, checkpoints=bad, at_checkpoint=lambda m, s: None)
