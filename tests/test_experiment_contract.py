"""What every experiment must provide: one :class:`~setfuncs.experiments.experiment.Experiment`, the same
file set, and hooks that fit together.

Each test runs over the four experiments. It proves that an experiment's package defines one
``EXPERIMENT`` in its ``experiment`` module and its command line reads it; that its budgets, configurations
and typed run make seed-by-seed tasks the engine can ship to a worker; that its committed results file
loads through it and its metric, claims and protocol differences read that file; and that the packages
share at least :data:`SHARED_MODULES` module names for the same roles.
"""

from __future__ import annotations

import dataclasses
import importlib
import pickle
from pathlib import Path

import numpy as np
import pytest

import setfuncs
from setfuncs.experiments.experiment import Experiment
from setfuncs.experiments.findings import Claim, Finding, select
from setfuncs.experiments.results import results_file

EXPERIMENTS = ("circle", "mixture", "pointcloud", "attention")
#: The committed sweep each experiment's findings read.
FILES = {name: f"{name}-medium.json" for name in EXPERIMENTS}
#: The module names every experiment package has.
ROLES = ("__init__", "__main__", "budget", "differences", "experiment", "figures", "findings", "metric", "stream",
         "sweep", "table")
#: How many module names the four packages must share at least.
SHARED_MODULES = 10
PAPER = results_file("paper-results.json")


def _experiment(name: str) -> Experiment:
    return importlib.import_module(f"setfuncs.experiments.{name}.experiment").EXPERIMENT


@pytest.fixture(scope="module")
def loaded() -> dict[str, dict]:
    return {name: _experiment(name).load_results(results_file(FILES[name])) for name in EXPERIMENTS}


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_the_package_defines_one_experiment_and_its_command_line_reads_it(name: str) -> None:
    package = importlib.import_module(f"setfuncs.experiments.{name}")
    experiment = _experiment(name)
    assert isinstance(experiment, Experiment)
    assert package.EXPERIMENT is experiment and experiment.package == package.__name__
    assert importlib.import_module(f"{package.__name__}.__main__").COMMAND_LINE.experiment is experiment
    assert package.load_results.__self__ is experiment and package.sweep.__self__ is experiment
    defined = [other for other in EXPERIMENTS if other != name if _experiment(other) is experiment]
    assert defined == []


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_hook_is_given_and_the_workers_can_import_the_run(name: str) -> None:
    experiment = _experiment(name)
    hooks = ("make_model", "train", "evaluate", "run_one", "run_many", "provenance", "metric_by_run", "claims",
             "differences")
    assert all(callable(getattr(experiment, hook)) for hook in hooks)
    for hook in ("run_one", "run_many"):       # Dask ships them by name: module-level functions of the package
        function = getattr(experiment, hook)
        assert function.__module__.startswith(experiment.package) and pickle.loads(pickle.dumps(function)) is function
    assert (experiment.data is None) == (experiment.data_identity is None)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_budgets_configurations_and_runs_make_seed_by_seed_tasks(name: str) -> None:
    experiment = _experiment(name)
    assert set(experiment.budgets) == {"quick", "medium", "full"}
    assert all(isinstance(b, experiment.budget_type) and b.name == key for key, b in experiment.budgets.items())
    configurations = list(experiment.configurations)
    assert configurations and len(set(configurations)) == len(configurations)
    quick = experiment.budgets["quick"]
    specs, tasks = experiment.tasks(2, quick, configurations[:3], experiment.data)
    assert specs == configurations[:3]
    assert [(t.spec, t.seed) for t in tasks] == [(s, seed) for seed in (0, 1) for s in specs]
    for task in tasks:
        run = task.args
        assert isinstance(run, experiment.run) and run.spec == task.spec and run.seed == task.seed
        assert run.budget is quick and run.progress is False
        assert pickle.loads(pickle.dumps(run)) == run
    with pytest.raises(ValueError, match="unknown"):
        experiment.tasks(1, quick, ["no/such"], experiment.data)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_a_sweep_refuses_another_experiments_budget(name: str, tmp_path: Path) -> None:
    experiment = _experiment(name)
    other = _experiment(next(o for o in EXPERIMENTS if o != name and _experiment(o).budget_type is not
                             experiment.budget_type))
    with pytest.raises(ValueError, match=f"{experiment.title} Budget"):
        experiment.sweep(1, other.budgets["quick"], tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_the_committed_file_loads_and_its_metric_claims_and_differences_read_it(name: str, loaded: dict) -> None:
    experiment = _experiment(name)
    results = loaded[name]
    assert results["experiment"] == experiment.name
    metric = experiment.metric_by_run(results)
    seeds = {run["seed"] for run in results["runs"]}
    assert metric and {spec for spec, _ in metric} <= set(experiment.configurations)
    assert {seed for _, seed in metric} <= seeds
    assert all(isinstance(value, float) and not np.isneginf(value) for value in metric.values())
    claims = experiment.claims(results, PAPER, "paper")
    assert claims and all(isinstance(c, Claim) for c in claims)
    assert len({c.key for c in claims}) == len(claims)
    found = experiment.findings(results, PAPER)
    assert all(isinstance(f, Finding) for f in found)
    for claim in claims:                          # every claim is found again by its key
        assert [f.key for f in select(found, claim.key) if f.variant in ("paper", "both")] == [claim.key]
    assert isinstance(experiment.differences(results), list)


def test_an_experiment_without_data_refuses_a_data_set(tmp_path: Path) -> None:
    circle = _experiment("circle")
    with pytest.raises(ValueError, match="reads no data set"):
        circle.sweep(1, circle.budgets["quick"], tmp_path / "x.json", None, "shapes")
    assert not (tmp_path / "x.json").exists()


def test_the_four_packages_share_their_file_set() -> None:
    root = Path(setfuncs.__file__).resolve().parent / "experiments"
    names = [{path.stem for path in (root / name).glob("*.py")} for name in EXPERIMENTS]
    shared = set.intersection(*names)
    assert set(ROLES) <= shared and len(shared) >= SHARED_MODULES


def test_an_experiment_is_a_frozen_declaration() -> None:
    experiment = _experiment("circle")
    with pytest.raises(dataclasses.FrozenInstanceError):
        experiment.name = "other"
    assert repr(experiment) == "Experiment('minimal_enclosing_circle', 'setfuncs.experiments.circle')"
