"""A rerun against the committed runs: paired by configuration and seed, bit-identical or by how much not;
only files of one sweep (experiment, budget, data) pair, a relabelled copy is refused, and a committed
metric of 0 has an infinite relative difference that the row explains."""

from __future__ import annotations

import copy
import math

import pytest

from setfuncs.experiments.circle import load_results
from setfuncs.experiments.results import results_file
from setfuncs.experiments.reruns import file_identity, rerun_agreement

IDENTITY = {"experiment": "circle", "budget": "medium", "budget_parameters": {"steps": 2000, "hidden": 64}}


def file(experiment: str, runs: list[tuple[str, int, float]], **identity: object) -> dict:
    return {"experiment": experiment, "identity": {**IDENTITY, "experiment": experiment, **identity},
            "runs": [{"spec": spec, "seed": seed, "mse": mse, "error": None, "collapsed": False} for spec, seed, mse in runs]}


def test_runs_are_paired_by_configuration_and_seed() -> None:
    committed = file("circle", [("a", 0, 1.0), ("a", 1, 2.0), ("b", 0, 4.0), ("b", 1, 5.0), ("c", 0, 1.0)])
    rerun = file("circle", [("b", 2, 9.0), ("b", 1, 5.0), ("b", 0, 4.4), ("a", 1, 2.0), ("a", 0, 1.0)])
    rows = rerun_agreement(rerun, committed, "mse")
    assert list(rows) == ["a", "b"]                              # by configuration, whatever the files' order
    assert rows == {"a": {"seeds": 2, "identical": 2, "largest_relative_difference": 0.0,
                          "largest_absolute_difference": 0.0, "median_committed": 1.5, "median_rerun": 1.5, "note": ""},
                    "b": {"seeds": 2, "identical": 1, "largest_relative_difference": pytest.approx(0.1),
                          "largest_absolute_difference": pytest.approx(0.4), "median_committed": 4.5,
                          "median_rerun": pytest.approx(4.7), "note": ""}}


def test_untrained_runs_are_left_out_and_nothing_paired_is_refused() -> None:
    committed = file("circle", [("a", 0, 1.0), ("a", 1, 2.0)])
    rerun = file("circle", [("a", 0, 3.0), ("a", 1, 2.0)])
    rerun["runs"][0]["collapsed"] = True
    assert rerun_agreement(rerun, committed, "mse") == {"a": {"seeds": 1, "identical": 1, "largest_relative_difference": 0.0,
                                                              "largest_absolute_difference": 0.0,
                                                              "median_committed": 2.0, "median_rerun": 2.0, "note": ""}}
    with pytest.raises(ValueError, match="pair no trained run"):
        rerun_agreement(file("circle", [("z", 0, 1.0)]), committed, "mse")
    with pytest.raises(ValueError, match="one experiment"):
        rerun_agreement(file("mixture", [("a", 0, 1.0)]), committed, "mse")


def test_files_of_two_budgets_are_refused_with_the_fields_that_differ() -> None:
    """A quick rerun against the medium file is not a rerun of its runs: the error names the budget and
    each parameter that differs, with both files' values."""
    committed = file("circle", [("a", 0, 1.0), ("a", 1, 2.0)])
    quick = file("circle", [("a", 0, 1.5), ("a", 1, 2.5)], budget="quick",
                 budget_parameters={"steps": 200, "hidden": 64})
    with pytest.raises(ValueError, match="not runs of one sweep") as refused:
        rerun_agreement(quick, committed, "mse")
    message = str(refused.value)
    assert "budget: 'quick' in the rerun, 'medium' in the committed file" in message
    assert "budget_parameters.steps: 200 in the rerun, 2000 in the committed file" in message
    assert "hidden" not in message                                     # the same in both: not named
    with pytest.raises(ValueError, match="data: 'modelnet40' in probe.json, 'shapes' in sweep.json"):
        rerun_agreement(file("circle", [("a", 0, 1.0)], data="modelnet40"), file("circle", [("a", 0, 1.0)], data="shapes"),
                        "mse", names=("probe.json", "sweep.json"))


def test_the_committed_probe_pairs_with_the_sweep_and_a_quick_copy_does_not() -> None:
    """Chapter 8's probe is a rerun of five of the medium sweep's configurations (one identity); the same runs
    labelled with the quick budget are refused, where they used to be compared as reruns."""
    medium = load_results(results_file("circle-medium.json"))
    probe = load_results(results_file("probes/circle-convergence.json"))
    assert file_identity(probe) == file_identity(medium)
    rows = rerun_agreement(probe, medium, "mse")
    assert rows["max/max"]["identical"] == rows["max/max"]["seeds"] == 10
    quick = copy.deepcopy(probe)
    quick["identity"]["budget"] = "quick"
    quick["identity"]["budget_parameters"]["steps"] = 1000
    with pytest.raises(ValueError, match=r"budget: 'quick' in the rerun, 'medium' in the committed file; "
                                         r"budget_parameters.steps: 1000 in the rerun, 2000 in the committed file"):
        rerun_agreement(quick, medium, "mse")


def test_a_relabelled_copy_is_refused_not_called_identical() -> None:
    """A copy of the committed file whose runs of two configurations swapped their labels (setting and
    aggregations), the values left where they were: every value matches by (spec, seed), but the runs
    are not the same configurations, so the agreement refuses it instead of calling it identical."""
    medium = load_results(results_file("circle-medium.json"))
    relabelled = copy.deepcopy(medium)
    fields = ("setting", "equivariant", "final")
    labels = {r["spec"]: tuple(r[k] for k in fields) for r in medium["runs"]}
    a, b = "max/max", "r-lse/r-lse"
    for run in relabelled["runs"]:
        if run["spec"] in (a, b):
            run.update(zip(fields, labels[b if run["spec"] == a else a]))
    with pytest.raises(ValueError, match=r"max/max seed 0 is not the same configuration in both files: "
                                         r"setting 'plain/plain' in the committed file, 'recurrent/recurrent' in the rerun"):
        rerun_agreement(relabelled, medium, "mse")
    assert all(row["identical"] == row["seeds"] for row in rerun_agreement(copy.deepcopy(medium), medium, "mse").values())


def test_a_committed_metric_of_zero_has_an_infinite_relative_difference_and_says_why() -> None:
    committed = file("circle", [("a", 0, 0.0), ("a", 1, 2.0), ("b", 0, 0.0), ("c", 0, 0.0)])
    rerun = file("circle", [("a", 0, 0.25), ("a", 1, 2.0), ("b", 0, 0.0), ("c", 0, -0.0)])
    rows = rerun_agreement(rerun, committed, "mse")
    assert rows["a"]["largest_relative_difference"] == math.inf and rows["a"]["largest_absolute_difference"] == 0.25
    assert rows["a"]["identical"] == 1 and "is 0 at seed 0, where the rerun's is not" in rows["a"]["note"]
    assert rows["b"] == {"seeds": 1, "identical": 1, "largest_relative_difference": 0.0, "largest_absolute_difference": 0.0,
                         "median_committed": 0.0, "median_rerun": 0.0, "note": ""}
    # -0.0 equals 0.0 (no difference of any size) but is not the same bits
    assert rows["c"]["identical"] == 0 and rows["c"]["largest_relative_difference"] == 0.0 and rows["c"]["note"] == ""
