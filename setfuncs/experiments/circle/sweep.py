r"""Training and evaluation of the minimal enclosing circle experiment (Table 1 of the paper).

**Configurations.** Four *settings* (equivariant / final aggregation, each plain or recurrent)
times the 3 x 3 combinations of an equivariant aggregation ``e`` and a final aggregation ``f`` in
``{mean, max, lse}``: 36 model specs ``"[r-]e/[r-]f"`` (e.g. ``"max/max"`` in ``plain/plain``,
``"r-lse/r-lse"`` in ``recurrent/recurrent``), each a :class:`~setfuncs.model.DeepSet` ``2 -> 3``.

**Loss and metrics.** The models predict ``(centre_x, centre_y, radius)`` and are trained on the
mean squared error over these three outputs (fresh populations at every step). On a test set the
reported MSE of a run is

.. math::
    \text{MSE} = \underbrace{\overline{(\hat r - r)^2}}_{\text{radius MSE}}
               + \underbrace{\overline{\lVert \hat c - c \rVert^2}}_{\text{centre MSE}},

averages over test populations; the centre MSE is the mean *squared Euclidean distance* of the
centres. This split matches the paper's Table 1, whose best MSE is the sum of its radius and
centre columns up to rounding (e.g. 0.06 + 0.66 ~ 0.71); it is three times the training loss.

**Configurations beyond the paper.** The 20 configurations with LSE run again with log-mean-exp
in its place (:func:`~setfuncs.experiments.sweeps.lme_configurations`), 56 in all. Every model's
output layer starts at the mean target (:func:`~setfuncs.experiments.circle.data.target_mean`,
weights scaled by :data:`~setfuncs.model.HEAD_SCALE`), and every run records whether it
collapsed (:mod:`~setfuncs.experiments.collapse`).

**Budgets** are in :mod:`~setfuncs.experiments.circle.budget`.

**Seeds.** Run ``seed`` of a configuration initialises the model after ``torch.manual_seed(seed)``
and draws its training populations from ``torch.Generator().manual_seed(TRAIN_SEED + seed)``;
every run of a sweep uses the same test sets (:data:`~setfuncs.experiments.sweeps.TEST_SEED`),
one per population size in ``budget.test_population_sizes`` (the models are trained at 20 only).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import torch
from torch import Tensor

import setfuncs as sf
from setfuncs.model import HEAD_SCALE
from setfuncs.steps import TrainingLog

from ..collapse import COLLAPSE_RATIO, collapse_record
from ..protocol import Checkpoints, checkpoint_steps, run_protocol
from ..provenance import sweep_provenance
from ..schema import RunSchema
from ..sweeps import (TEST_SEED, TRAIN_SEED, GridRun, make_deep_set, run_configuration_ensemble, run_record,
                      train_configuration, train_configuration_ensemble)
from .budget import Budget
from .data import POPULATION_SIZE, circle_batch, mixture_description, target_mean, test_set
from .stream import ensemble_stream, stacked_sampler

__all__ = ["NAME", "RUN_SCHEMA", "make_model", "circle_loss", "circle_errors", "train_model", "test_checkpoints",
           "train_ensemble", "evaluate_run", "run_one", "run_ensemble", "provenance"]

#: The ``experiment`` field of a results file.
NAME = "minimal_enclosing_circle"
#: What every finished run records (:mod:`~setfuncs.experiments.schema`), checked where a file is read.
RUN_SCHEMA = RunSchema(metrics=("mse", "radius_mse", "center_mse"), maps=("mse_by_population_size",),
                       fields=("setting", "equivariant", "final"))


def make_model(setting: str, equivariant: str, final: str, budget: Budget) -> sf.DeepSet:
    """The Deep Set ``2 -> 3`` of one configuration at ``budget``'s width and depth, its output
    started at the mean target (:func:`~setfuncs.experiments.circle.data.target_mean`)."""
    return make_deep_set(setting, equivariant, final, budget, target_mean())


def circle_loss(prediction: Tensor, y: Tensor) -> Tensor:
    """Training loss: MSE over the three outputs ``(centre_x, centre_y, radius)``."""
    return torch.mean((prediction - y) ** 2)


def circle_errors(prediction: Tensor, y: Tensor) -> dict[str, float]:
    """``radius_mse``, ``center_mse`` (squared centre distance) and their sum ``mse``, test-set means."""
    radius = float(torch.mean((prediction[:, 2] - y[:, 2]) ** 2))
    center = float(torch.mean(torch.sum((prediction[:, :2] - y[:, :2]) ** 2, dim=1)))
    return {"mse": radius + center, "radius_mse": radius, "center_mse": center}


def train_model(setting: str, equivariant: str, final: str, seed: int, budget: Budget,
                progress: bool = True, device: str = "cpu", checkpoints: Checkpoints | None = None
                ) -> tuple[sf.DeepSet, TrainingLog]:
    """Train one configuration with one seed (:func:`~setfuncs.experiments.sweeps.train_configuration`
    on fresh circle populations) on ``device``: the model (in eval mode, on ``device``) and its loss at
    every step (a :class:`~setfuncs.steps.TrainingLog`); ``checkpoints`` (:func:`test_checkpoints`)
    record the test MSE during training."""
    def sampler(generator: torch.Generator) -> Callable[[], tuple[Tensor, Tensor, None]]:
        return lambda: circle_batch(budget.batch, POPULATION_SIZE, generator)

    return train_configuration(setting, equivariant, final, seed, budget, target_mean(), sampler, circle_loss,
                               progress, device, checkpoints)


def test_checkpoints(budget: Budget) -> Checkpoints:
    """The test MSE at ``N = 20`` (:func:`circle_errors`'s ``mse``) at the
    :func:`~setfuncs.experiments.protocol.checkpoint_steps` of ``budget``, on the model's device."""
    x, y, mask = test_set(budget.test_size, POPULATION_SIZE, TEST_SEED)

    def mse(model: sf.DeepSet) -> float:
        device = next(model.parameters()).device
        return circle_errors(model(x.to(device), None if mask is None else mask.to(device)), y.to(device))["mse"]

    return Checkpoints("test_mse", checkpoint_steps(budget.steps), mse)


def train_ensemble(setting: str, equivariant: str, final: str, seeds: Sequence[int], budget: Budget,
                   progress: bool = False, device: str = "cpu", checkpoints: Sequence[Checkpoints] | None = None
                   ) -> list[tuple[sf.DeepSet, TrainingLog | FloatingPointError]]:
    """Train one configuration with ``seeds`` as one ensemble on ``device``
    (:func:`~setfuncs.experiments.sweeps.train_configuration_ensemble`): per seed, what :func:`train_model` gives
    (or the error of a diverged run). The seeds' training streams are made once per process and
    shared by every configuration (:mod:`~setfuncs.experiments.circle.stream`). ``checkpoints``: one
    :func:`test_checkpoints` per seed."""
    x, y = ensemble_stream(tuple(seeds), budget.steps, budget.batch, str(device))
    return train_configuration_ensemble(setting, equivariant, final, list(seeds), budget, target_mean(),
                                        stacked_sampler(x, y), circle_loss, progress, device, checkpoints)


def evaluate_run(model: sf.DeepSet, budget: Budget) -> dict:
    """The metrics of a trained ``model`` on the test sets, on the model's device: ``mse,
    radius_mse, center_mse``, ``spread_ratio`` and ``collapsed`` at ``N = 20`` and
    ``mse_by_population_size``."""
    device = next(model.parameters()).device
    metrics: dict = {}
    by_size = {}
    with torch.no_grad():
        for n in budget.test_population_sizes:
            x, y, mask = test_set(budget.test_size, n, TEST_SEED)
            prediction = model(x.to(device), mask)
            errors = circle_errors(prediction, y.to(device))
            by_size[str(n)] = errors["mse"]
            if n == POPULATION_SIZE:
                metrics.update(errors, **collapse_record(prediction, y.to(device)))
    return {**metrics, "mse_by_population_size": by_size}


def run_one(setting: str, equivariant: str, final: str, seed: int, budget: Budget,
            progress: bool = False, device: str = "cpu") -> dict:
    """Train one configuration with one seed on ``device`` and evaluate it; a JSON-friendly record
    (:func:`~setfuncs.experiments.protocol.run_protocol`).

    Keys: ``spec, setting, equivariant, final, seed``, the training record (``train_seconds``,
    ``final_train_loss``, ``training``, ``learning_curve`` with the test MSE at five checkpoints:
    :func:`~setfuncs.experiments.protocol.training_record`, :func:`test_checkpoints`), ``mse, radius_mse, center_mse`` (test
    set at ``N = 20``), ``mse_by_population_size`` (``{"5": mse, ...}``), ``spread_ratio`` and
    ``collapsed`` (:func:`~setfuncs.experiments.collapse.collapse_record` at ``N = 20``),
    ``eval_seconds`` and ``error`` (None, or the message of a diverged training, whose metrics are
    then None).
    """
    checkpoints = test_checkpoints(budget)
    return run_protocol(run_record(setting, equivariant, final, seed), RUN_SCHEMA,
                        lambda: train_model(setting, equivariant, final, seed, budget, progress, device, checkpoints),
                        lambda model: evaluate_run(model, budget), checkpoints)


def run_ensemble(tasks: Sequence[tuple]) -> list[dict]:
    """:func:`run_one` for several seeds of one configuration, trained as one ensemble
    (:func:`train_ensemble`, each seed with its :func:`test_checkpoints`, as :func:`run_one` records
    them; :func:`~setfuncs.experiments.sweeps.run_configuration_ensemble`), the test sets labelled
    beside the training; ``tasks`` are :func:`run_one`'s arguments (:class:`~setfuncs.experiments.sweeps.GridRun`),
    equal but for the seed."""
    runs = [GridRun(*task) for task in tasks]
    run = runs[0]
    budget = run.budget
    checkpoints = [test_checkpoints(budget) for _ in runs]

    def train(seeds: list[int]) -> list:
        with ThreadPoolExecutor(max_workers=1) as pool:   # the test sets' labels, beside the training
            pool.submit(lambda: [test_set(budget.test_size, n, TEST_SEED) for n in budget.test_population_sizes])
            return train_ensemble(run.setting, run.equivariant, run.final, seeds, budget, run.progress, run.device,
                                  checkpoints)

    return run_configuration_ensemble(runs, RUN_SCHEMA, train, lambda model: evaluate_run(model, budget), checkpoints)


def provenance(budget: Budget, runs: int, specs: Sequence[str]) -> dict:
    """Command line, git commit, budget, seeds, data, versions and hardware of a sweep (no timings or runs)."""
    return {
        **sweep_provenance(NAME, budget, runs, specs,
                           f"model init torch.manual_seed(seed); training data seed {TRAIN_SEED} + seed; "
                           f"test sets seed {TEST_SEED}"),
        "mixture": mixture_description(),
        "head": {"init": f"output bias at the mean target over 10,000 populations, weights x {HEAD_SCALE}",
                 "bias": list(target_mean())},
        "collapse": {"spread_ratio_below": COLLAPSE_RATIO, "of": "predictions at N = 20 against the targets"},
    }
