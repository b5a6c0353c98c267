"""What every experiment's sweep shares: the configurations, budgets, seeds, training of one
configuration, and the typed run of one task on the paper's grid (:class:`GridRun`).

An experiment (:class:`~setfuncs.experiments.experiment.Experiment`) supplies ``run_one(*task.args) -> dict``
(a module-level function, so Dask workers can import it) and its own provenance fields;
:func:`setfuncs.experiments.engine.sweep.run_sweep` runs the :class:`~setfuncs.experiments.tasks.Task` list
on a Dask cluster and writes the results file. The circle and mixture experiments run the paper's grid,
one :class:`GridRun` per task; the point-cloud and attention experiments one
:class:`~setfuncs.experiments.tasks.DataRun` per task.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

import torch
from torch import Tensor, nn

from setfuncs.ensemble import fit_ensemble
from setfuncs.model import DeepSet, init_head
from setfuncs.steps import TrainingLog
from setfuncs.train import Batch, fit

from .protocol import (Checkpoints, checkpoint_arguments, ensemble_checkpoint_arguments, record_outcome,
                       seeded_models, seeded_training)

__all__ = ["is_max_type", "SETTINGS", "PAPER_AGGREGATIONS", "AGGREGATIONS", "VARIANTS", "TRAIN_SEED", "TEST_SEED", "RERUN_SEEDS", "TrainingBudget",
           "GRID", "CONFIGURATION_OF", "paper_configurations", "lme_twin", "variant_spec", "lme_twins", "lme_configurations", "all_configurations", "in_variant", "spec_of",
           "GridRun", "make_deep_set", "train_configuration", "train_configuration_ensemble", "run_record", "run_configuration_ensemble"]

#: The paper's four settings, "<equivariant>/<final>", each plain or recurrent.
SETTINGS = ("plain/plain", "plain/recurrent", "recurrent/plain", "recurrent/recurrent")
#: The plain aggregations of Section 4 (mean, max, LSE).
PAPER_AGGREGATIONS = ("mean", "max", "lse")
#: The paper's and the book's log-mean-exp (``lme`` = LSE - ln n), which every sweep runs beside LSE.
AGGREGATIONS = ("mean", "max", "lse", "lme")
#: Two readings of the paper's 3 x 3 grid, its own aggregations and the same with LSE replaced by
#: log-mean-exp. The mean/max configurations belong to both.
VARIANTS = {"paper": ("mean", "max", "lse"), "lme": ("mean", "max", "lme")}
#: Offset of the training-data seed from the run's seed (model init uses the seed itself).
TRAIN_SEED = 1_000_000
#: Seed of every test set.
TEST_SEED = 2019
#: Seeds per configuration of the reruns into ``results/pending/`` (README, "The ten-seed reruns"): the
#: findings tables of 12 to 14 claims need at least 9 paired seeds before any claim passes Holm's step.
RERUN_SEEDS = 10


@dataclass(frozen=True)
class TrainingBudget:
    """The sizes every experiment's budget has; each experiment adds its evaluation sizes.

    Attributes:
        name: ``"quick"``, ``"medium"``, ``"full"`` or a custom name (tests).
        steps: Adam steps; batch: populations per step; lr: Adam's learning rate;
        clip: gradient-norm clipping threshold.
        hidden: width of every hidden layer; equivariant_layers: layers in ``combine``;
        recurrent_steps: reads ``T`` of every recurrent aggregation.
        test_size: test populations.
    """

    name: str
    steps: int
    batch: int
    lr: float
    clip: float
    hidden: int
    equivariant_layers: int
    recurrent_steps: int
    test_size: int

    def __post_init__(self) -> None:
        for field in ("steps", "batch", "hidden", "recurrent_steps", "test_size"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Budget.{field} must be a positive int, got {value!r}")
        if self.equivariant_layers < 0:
            raise ValueError(f"Budget.equivariant_layers must be >= 0, got {self.equivariant_layers}")
        if not (self.lr > 0 and self.clip > 0):
            raise ValueError(f"Budget.lr and Budget.clip must be positive, got {self.lr}, {self.clip}")


def paper_configurations() -> list[tuple[str, str, str]]:
    """The paper's 36 configurations ``(setting, equivariant, final)``, e.g. ``("recurrent/plain", "lse", "max")``."""
    return [(s, e, f) for s in SETTINGS for e in PAPER_AGGREGATIONS for f in PAPER_AGGREGATIONS]


def is_max_type(aggregation: str) -> bool:
    """Whether ``aggregation`` is of the max type, the paper's "max-type aggregations": ``max`` itself or a
    learnable aggregation built on it (``r-max``, ``q-max``), as the middle column of the paper's Figure 4
    shows plain and recurrent max together. One meaning for every chapter."""
    return aggregation.split("-")[-1] == "max"


def lme_twin(spec: str) -> str:
    """``spec`` with log-mean-exp in place of every LSE: each ``/``-separated part that is ``lse`` or
    ends in ``-lse`` (``r-lse``, ``q-lse``). ``lme_twin("max/r-lse") == "max/r-lme"``; a spec without
    LSE comes back unchanged. The one name map of every experiment's ``"lme"`` variant."""
    return "/".join(part[:-3] + "lme" if part == "lse" or part.endswith("-lse") else part for part in spec.split("/"))


def variant_spec(spec: str, variant: str) -> str:
    """``spec`` as the variant ``variant`` (a key of ``VARIANTS``) runs it: unchanged for
    ``"paper"``, its ``lme_twin`` for ``"lme"``."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {list(VARIANTS)}, got {variant!r}")
    return spec if variant == "paper" else lme_twin(spec)


def lme_twins() -> list[tuple[tuple[str, str, str], tuple[str, str, str]]]:
    """The paper's 20 configurations that use LSE, each with its twin: every LSE replaced by log-mean-exp."""
    return [((s, e, f), (s, lme_twin(e), lme_twin(f))) for s, e, f in paper_configurations() if "lse" in (e, f)]


def lme_configurations() -> list[tuple[str, str, str]]:
    """The 20 configurations of the paper that use LSE, with every LSE replaced by log-mean-exp."""
    return [twin for _, twin in lme_twins()]


def all_configurations() -> list[tuple[str, str, str]]:
    """What a sweep runs by default: the paper's 36 configurations, then the 20 with log-mean-exp."""
    return paper_configurations() + lme_configurations()


def in_variant(run: dict, variant: str) -> bool:
    """Whether a run's configuration belongs to the grid of ``variant`` (a key of :data:`VARIANTS`)."""
    family = VARIANTS[variant]
    return run["equivariant"] in family and run["final"] in family


def spec_of(setting: str, equivariant: str, final: str) -> str:
    """The model spec of a configuration: ``spec_of("recurrent/plain", "lse", "max") == "r-lse/max"``."""
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    for name, agg in (("equivariant", equivariant), ("final", final)):
        if agg not in AGGREGATIONS:
            raise ValueError(f"{name} aggregation must be one of {AGGREGATIONS}, got {agg!r}")
    recurrent_e, recurrent_f = (part == "recurrent" for part in setting.split("/"))
    return f"{'r-' if recurrent_e else ''}{equivariant}/{'r-' if recurrent_f else ''}{final}"


class GridRun(NamedTuple):
    """The arguments of ``run_one`` of an experiment on the paper's grid of configurations (circle,
    mixture): ``run_one(setting, equivariant, final, seed, budget, progress, device)``."""

    setting: str
    equivariant: str
    final: str
    seed: int
    budget: Any
    progress: bool = False
    device: str = "cpu"

    @property
    def spec(self) -> str:
        """The model spec, :func:`spec_of` the configuration."""
        return spec_of(self.setting, self.equivariant, self.final)

    @classmethod
    def of(cls, spec: str, seed: int, budget: Any, data: None = None, device: str = "cpu") -> "GridRun":
        """The run of configuration ``spec`` (one of :func:`all_configurations`' specs) with ``seed``; a grid
        experiment reads no data set (``data`` None)."""
        if data is not None:
            raise ValueError(f"a grid experiment draws its own populations and reads no data set, got {data!r}")
        if spec not in CONFIGURATION_OF:
            raise ValueError(f"unknown configuration {spec!r}; choose among {list(CONFIGURATION_OF)}")
        return cls(*CONFIGURATION_OF[spec], seed, budget, False, device)


#: The configuration ``(setting, equivariant, final)`` of every spec of :func:`all_configurations`.
CONFIGURATION_OF = {spec_of(*c): c for c in all_configurations()}
#: The specs of :func:`all_configurations`: what a circle or mixture sweep runs by default.
GRID = tuple(CONFIGURATION_OF)


def make_deep_set(setting: str, equivariant: str, final: str, budget: TrainingBudget,
                  head_bias: Sequence[float]) -> DeepSet:
    """The Deep Set ``2 -> len(head_bias)`` of one configuration at ``budget``'s width, depth and
    reads, its output layer started at the data's marginal (:func:`~setfuncs.model.init_head`)."""
    model = DeepSet(2, len(head_bias), spec_of(setting, equivariant, final), hidden=budget.hidden,
                    equivariant_layers=budget.equivariant_layers, steps=budget.recurrent_steps)
    init_head(model.process, head_bias)
    return model


def train_configuration(setting: str, equivariant: str, final: str, seed: int, budget: TrainingBudget,
                        head_bias: Sequence[float], sampler: Callable[[torch.Generator], Callable[[], Batch]],
                        loss: Callable[[Tensor, Tensor], Tensor], progress: bool = True,
                        device: str = "cpu", checkpoints: Checkpoints | None = None) -> tuple[DeepSet, TrainingLog]:
    """Train one configuration with one seed: the model (in eval mode) and its loss at every step.

    The model (:func:`make_deep_set`, its output at ``head_bias``) is initialised after
    ``torch.manual_seed(seed)`` (:func:`~setfuncs.experiments.protocol.seeded_training`); the training batches come from ``sampler(generator)`` with
    ``generator = torch.Generator().manual_seed(TRAIN_SEED + seed)``, fresh at every Adam step.
    The model trains on ``device`` (:func:`~setfuncs.train.fit`; a CUDA-graph step on a GPU) and
    stays there; ``checkpoints`` record a test metric during training. Raises FloatingPointError if
    the loss diverges.
    """
    generator = torch.Generator().manual_seed(TRAIN_SEED + seed)
    return seeded_training(seed, lambda: make_deep_set(setting, equivariant, final, budget, head_bias),
                           lambda model: fit(model, sampler(generator), loss, budget.steps, lr=budget.lr,
                                             clip=budget.clip, progress=progress,
                                             desc=f"{spec_of(setting, equivariant, final)} seed {seed}",
                                             device=device, **checkpoint_arguments(checkpoints)))


def train_configuration_ensemble(setting: str, equivariant: str, final: str, seeds: Sequence[int],
                                 budget: TrainingBudget, head_bias: Sequence[float],
                                 samplers: Sequence[Callable[[], Batch]] | Callable[[], Batch],
                                 loss: Callable[[Tensor, Tensor], Tensor], progress: bool = True,
                                 device: str = "cpu", checkpoints: Sequence[Checkpoints] | None = None
                                 ) -> list[tuple[DeepSet, TrainingLog | FloatingPointError]]:
    """Train one configuration with several seeds as one ensemble (:func:`~setfuncs.ensemble.fit_ensemble`):
    per seed, the model (in eval mode, on ``device``) and its losses, or the error of a diverged run.

    Seed ``s``'s model is initialised after ``torch.manual_seed(s)``, exactly as
    :func:`train_configuration` does; ``samplers`` are the seeds' training streams (one sampler per
    seed, or one that returns the stacked batches ``[S, ...]``), which the caller makes from
    ``TRAIN_SEED + s`` as :func:`train_configuration` does. ``checkpoints``: one per seed, all at the
    same steps, each recording its seed's test metric during training.
    """
    models = seeded_models(seeds, lambda: make_deep_set(setting, equivariant, final, budget, head_bias))
    logs = fit_ensemble(models, samplers, loss, budget.steps, lr=budget.lr, clip=budget.clip, progress=progress,
                        desc=f"{spec_of(setting, equivariant, final)} seeds {seeds[0]}..{seeds[-1]}", device=device,
                        **ensemble_checkpoint_arguments(checkpoints, len(seeds)))
    return list(zip(models, logs))


def run_record(setting: str, equivariant: str, final: str, seed: int) -> dict:
    """What names a run in its record: ``spec, setting, equivariant, final, seed``."""
    return {"spec": spec_of(setting, equivariant, final), "setting": setting, "equivariant": equivariant,
            "final": final, "seed": seed}


def run_configuration_ensemble(tasks: Sequence[tuple], schema: Any,
                               train: Callable[[list[int]], list[tuple[nn.Module, TrainingLog | FloatingPointError]]],
                               evaluate: Callable[[nn.Module], dict],
                               checkpoints: Sequence[Checkpoints] | None = None,
                               record: Callable[[Any], dict] | None = None) -> list[dict]:
    """An experiment's ``run_many``: the runs of ``tasks`` (typed runs, :class:`GridRun` or
    :class:`~setfuncs.experiments.tasks.DataRun`, equal but for their ``seed``) trained as one ensemble by
    ``train(seeds)`` and recorded one by one (:func:`~setfuncs.experiments.protocol.record_outcome` with
    ``evaluate`` and each seed's ``checkpoints``). ``record(run)`` names a run in its record; the default,
    for a :class:`GridRun`, is :func:`run_record`. ``train_seconds`` of each record is the ensemble's
    training time divided by its size; ``ensemble`` gives the size and the whole time."""
    if not tasks:
        raise ValueError("run_configuration_ensemble needs at least one task")
    seeds = [run.seed for run in tasks]
    if any(run._replace(seed=0) != tasks[0]._replace(seed=0) for run in tasks):
        raise ValueError("run_ensemble: every task must be the same configuration, budget and device")
    name = record or (lambda run: run_record(run.setting, run.equivariant, run.final, run.seed))
    start = time.perf_counter()
    trained = train(seeds)
    seconds = time.perf_counter() - start
    ensemble = {"size": len(seeds), "train_seconds": seconds}
    return [record_outcome({**name(run), "ensemble": ensemble}, schema,
                           log if isinstance(log, FloatingPointError) else (model, log),   # a diverged seed: its error
                           seconds / len(seeds), evaluate, None if checkpoints is None else checkpoints[i])
            for i, (run, (model, log)) in enumerate(zip(tasks, trained))]
