"""A rerun against the committed runs: paired by configuration and seed, bit-identical or by how much not."""

from __future__ import annotations

import pytest

from setfuncs.experiments.reruns import rerun_agreement


def file(experiment: str, runs: list[tuple[str, int, float]]) -> dict:
    return {"experiment": experiment,
            "runs": [{"spec": spec, "seed": seed, "mse": mse, "error": None, "collapsed": False} for spec, seed, mse in runs]}


def test_runs_are_paired_by_configuration_and_seed() -> None:
    committed = file("circle", [("a", 0, 1.0), ("a", 1, 2.0), ("b", 0, 4.0), ("b", 1, 5.0), ("c", 0, 1.0)])
    rerun = file("circle", [("a", 0, 1.0), ("a", 1, 2.0), ("b", 0, 4.4), ("b", 1, 5.0), ("b", 2, 9.0)])
    rows = rerun_agreement(rerun, committed, "mse")
    assert rows == {"a": {"seeds": 2, "identical": 2, "largest_relative_difference": 0.0, "median_committed": 1.5,
                          "median_rerun": 1.5},
                    "b": {"seeds": 2, "identical": 1, "largest_relative_difference": pytest.approx(0.1),
                          "median_committed": 4.5, "median_rerun": pytest.approx(4.7)}}


def test_untrained_runs_are_left_out_and_nothing_paired_is_refused() -> None:
    committed = file("circle", [("a", 0, 1.0), ("a", 1, 2.0)])
    rerun = file("circle", [("a", 0, 3.0), ("a", 1, 2.0)])
    rerun["runs"][0]["collapsed"] = True
    assert rerun_agreement(rerun, committed, "mse") == {"a": {"seeds": 1, "identical": 1, "largest_relative_difference": 0.0,
                                                              "median_committed": 2.0, "median_rerun": 2.0}}
    with pytest.raises(ValueError, match="pair no trained run"):
        rerun_agreement(file("circle", [("z", 0, 1.0)]), committed, "mse")
    with pytest.raises(ValueError, match="one experiment"):
        rerun_agreement(file("mixture", [("a", 0, 1.0)]), committed, "mse")
