"""Null copies of results files (:mod:`setfuncs.experiments.nulls`): outcomes permuted within each
seed (and within each group of exchangeable configurations), names kept, nothing lost."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.nulls import IDENTITY_KEYS, null_copy
from setfuncs.experiments.results import results_file

LOADERS = {"circle": circle.load_results, "mixture": mixture.load_results, "pointcloud": pointcloud.load_results,
           "attention": attention.load_results}


def _outcomes(results: dict, seed: int) -> Counter:
    return Counter(json.dumps({k: v for k, v in r.items() if k not in IDENTITY_KEYS}, sort_keys=True, default=str)
                   for r in results["runs"] if r["seed"] == seed)


@pytest.mark.parametrize("name", LOADERS)
def test_a_null_copy_permutes_outcomes_within_each_seed(name: str) -> None:
    results = LOADERS[name](results_file(f"{name}-medium.json"))
    before = json.dumps(results, sort_keys=True, default=str)
    null = null_copy(results, seed=1)
    assert json.dumps(results, sort_keys=True, default=str) == before            # the original is untouched
    assert [(r["spec"], r["seed"]) for r in null["runs"]] == [(r["spec"], r["seed"]) for r in results["runs"]]
    for seed in results["seeds"]:
        assert _outcomes(null, seed) == _outcomes(results, seed)                  # the same outcomes, moved
    moved = sum(a != b for a, b in zip(null["runs"], results["runs"]))
    assert moved > len(results["runs"]) / 2
    assert null_copy(results, seed=1) == null and null_copy(results, seed=2) != null


def test_groups_exchange_outcomes_only_among_themselves() -> None:
    runs = [{"spec": s, "seed": k, "error": None, "collapsed": False, "mse": float(i)}
            for k in range(3) for i, s in enumerate(["a", "b", "c", "d"])]
    null = null_copy({"runs": runs}, seed=0, groups=[["a", "b"], ["c"]])
    for run in null["runs"]:
        assert run["mse"] in ({"a": (0.0, 1.0), "b": (0.0, 1.0), "c": (2.0,), "d": (3.0,)}[run["spec"]])


def test_failed_runs_keep_their_place() -> None:
    runs = [{"spec": "a", "seed": 0, "error": None, "mse": 1.0},
            {"spec": "b", "seed": 0, "error": "x", "failure": {"kind": "raised", "traceback": ""}},
            {"spec": "c", "seed": 0, "error": None, "mse": 2.0}]
    for seed in range(5):
        assert null_copy({"runs": runs}, seed)["runs"][1] == runs[1]
