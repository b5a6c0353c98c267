r"""The run protocol every experiment's sweep follows: seed -> build -> train -> evaluate -> record.

One run of a sweep is one configuration trained with one seed. Each experiment supplies only what
is its own: how a model is built, what it trains on, how it is evaluated, its metrics
(:class:`~setfuncs.experiments.schema.RunSchema`) and its provenance. The rest is here, once:

1. **seed, build, train** (:func:`seeded_training`): ``torch.manual_seed(seed)``, then the model is
   built (so its initialisation depends on the seed alone) and trained by
   :func:`~setfuncs.train.fit` (or :func:`~setfuncs.ensemble.fit_ensemble` for several seeds at
   once), which handles the device, the CUDA graph, the progress bar and divergence;
2. **record the training** (:func:`training_record`): ``train_seconds``, ``final_train_loss`` (the
   mean loss of the last :data:`FINAL_LOSS_STEPS` steps), ``training`` (device, graphed steps) and
   ``learning_curve`` (:func:`learning_curve`), with the experiment's test metric at
   :data:`CHECKPOINTS` evenly spaced steps (:class:`Checkpoints`), so that a chapter can show
   whether a budget has converged;
3. **evaluate** and **record** (:func:`run_protocol`, :func:`record_outcome`): the experiment's
   metrics and ``eval_seconds``, and ``error: None``. A training whose loss became non-finite, or an
   evaluation that raises :class:`FloatingPointError`, gives the record of a *diverged* run instead
   (:func:`diverged_record`): every metric of the schema ``None`` and ``error`` the message.

Every sweep then runs through :func:`run_experiment` (a budget check, the tasks, provenance and
:func:`~setfuncs.experiments.engine.sweep.run_sweep`).
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
import torch
from torch import nn

from setfuncs.steps import TrainingLog

from .provenance import sweep_identity
from .schema import RunSchema

if TYPE_CHECKING:   # the engine imports the sweeps' shared parts, which train through this module
    from .engine import Engine

__all__ = ["RANDOM_STATE", "FINAL_LOSS_STEPS", "CURVE_POINTS", "CHECKPOINTS", "checkpoint_steps", "Checkpoints", "checkpoint_arguments", "ensemble_checkpoint_arguments", "learning_curve", "training_record", "diverged_record",
           "seeded_training", "seeded_models", "record_outcome", "run_protocol", "check_budget", "run_experiment"]

#: Held while a thread seeds torch's global generators and draws from them (a model's
#: initialisation, a checkpoint's evaluation), so that configurations trained in threads at once
#: (:mod:`~setfuncs.experiments.concurrent`) build exactly the models they would build one after another.
RANDOM_STATE = threading.RLock()
#: Steps whose mean loss is a run's ``final_train_loss``.
FINAL_LOSS_STEPS = 50
#: The most points of a run's learning curve.
CURVE_POINTS = 100
#: Steps of a run at which its test metric is recorded (evenly spaced, the last one the end).
CHECKPOINTS = 5

Trained = tuple[nn.Module, TrainingLog]


def learning_curve(losses: Sequence[float], points: int = CURVE_POINTS) -> dict[str, list]:
    r"""A run's training loss on at most ``points`` points: the mean over consecutive windows of
    :math:`w = \lceil T / \text{points} \rceil` steps (the last window may be shorter),

    .. math::
        \bar\ell_j = \frac{1}{|W_j|} \sum_{t \in W_j} \ell_t, \qquad W_j = \{jw, \dots, \min((j+1)w, T) - 1\},

    recorded as ``{"steps": [...], "loss": [...]}`` with ``steps[j]`` the number of steps done at
    the window's end (:math:`\min((j+1)w, T)`)."""
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise ValueError(f"points must be a positive int, got {points!r}")
    values = np.asarray(losses, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"losses must be a non-empty sequence of numbers, got shape {values.shape}")
    width = math.ceil(values.size / points)
    ends = list(range(width, values.size, width)) + [values.size]
    starts = [0, *ends[:-1]]
    return {"steps": ends, "loss": [float(values[a:b].mean()) for a, b in zip(starts, ends)]}


def checkpoint_steps(steps: int, count: int = CHECKPOINTS) -> list[int]:
    r"""``count`` evenly spaced step counts of a training of ``steps`` steps,
    :math:`\operatorname{round}(k \cdot \text{steps} / \text{count})` for :math:`k = 1, \dots, \text{count}`
    (fewer when they coincide), the last one ``steps``."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a positive int, got {count!r}")
    return sorted({max(1, round(k * steps / count)) for k in range(1, count + 1)})


@dataclass
class Checkpoints:
    """A test metric recorded during training: ``metric(model)`` (lower or higher is better, as its
    ``name`` says) after each of ``steps``, with the model in eval mode
    (:func:`~setfuncs.train.fit`'s ``checkpoints`` and ``at_checkpoint``). Its evaluation leaves
    torch's random generators as it found them, so a run with checkpoints trains exactly as one
    without (an evaluation may reseed them, as the attention experiment's does).

    Attributes:
        name: the metric's record key, e.g. ``"test_mse"``.
        steps: the step counts (:func:`checkpoint_steps`).
        metric: the model (on its training device) -> a number.
        values: the metric at each step reached so far.
    """

    name: str
    steps: list[int]
    metric: Callable[[nn.Module], float]
    values: list[float] = field(default_factory=list)

    def __call__(self, model: nn.Module, step: int) -> None:
        """Record the metric of ``model`` after ``step`` steps."""
        parameter = next(model.parameters(), None)
        devices = [parameter.device] if parameter is not None and parameter.device.type == "cuda" else []
        with RANDOM_STATE, torch.random.fork_rng(devices=devices):
            self.values.append(float(self.metric(model)))

    def record(self) -> dict:
        """``{"metric": name, "steps": [...], "values": [...]}`` for the steps reached."""
        return {"metric": self.name, "steps": self.steps[:len(self.values)], "values": list(self.values)}


def checkpoint_arguments(checkpoints: Checkpoints | None) -> dict:
    """The keyword arguments of :func:`~setfuncs.train.fit` that record ``checkpoints`` (none for None)."""
    return {} if checkpoints is None else {"checkpoints": checkpoints.steps, "at_checkpoint": checkpoints}


def ensemble_checkpoint_arguments(checkpoints: Sequence[Checkpoints] | None, models: int) -> dict:
    """The keyword arguments of :func:`~setfuncs.ensemble.fit_ensemble` that record ``checkpoints[s]`` for
    model ``s`` of an ensemble of ``models`` (none for None); a ValueError unless there is one per
    model, all at the same steps."""
    if checkpoints is None:
        return {}
    if len(checkpoints) != models or any(c.steps != checkpoints[0].steps for c in checkpoints):
        raise ValueError(f"checkpoints must hold one Checkpoints per seed ({models}), that is one Checkpoints per "
                         f"model of the ensemble, all at the same steps; got {len(checkpoints)} at steps "
                         f"{[c.steps for c in checkpoints]}")
    return {"checkpoints": checkpoints[0].steps, "at_checkpoint": lambda s, model, step: checkpoints[s](model, step)}


def training_record(log: TrainingLog, seconds: float, checkpoints: Checkpoints | None = None) -> dict:
    """What a run records of its training: ``train_seconds``, ``final_train_loss`` (the mean of the
    last :data:`FINAL_LOSS_STEPS` steps), ``training`` (:meth:`~setfuncs.steps.TrainingLog.describe`)
    and ``learning_curve`` (:func:`learning_curve`, with ``"test"``: the ``checkpoints``' record)."""
    curve = learning_curve(log)
    if checkpoints is not None:
        curve["test"] = checkpoints.record()
    return {"train_seconds": seconds, "final_train_loss": float(np.mean(log[-FINAL_LOSS_STEPS:])),
            "training": log.describe(), "learning_curve": curve}


def diverged_record(record: dict, schema: RunSchema, error: Exception, **known: Any) -> dict:
    """The record of a diverged run: ``record``, the values already ``known`` (e.g. ``train_seconds``),
    ``None`` for every key of ``schema`` (fields, metrics, maps, details) and each part of the training
    record that ``record`` does not hold, and ``error`` (the message)."""
    keys = ("final_train_loss", "training", "learning_curve", "eval_seconds", "spread_ratio", "collapsed",
            *schema.fields, *schema.metrics, *schema.maps, *schema.details)
    return {**record, **{key: None for key in keys if key not in record}, **known, "error": str(error)}


def seeded_training(seed: int, build: Callable[[], nn.Module], train: Callable[[nn.Module], TrainingLog]
                    ) -> Trained:
    """Seed, build, train: ``torch.manual_seed(seed)``, ``model = build()``, ``log = train(model)``;
    the trained model (in eval mode) and its log. A diverged training raises FloatingPointError.
    Seeding and building hold :data:`RANDOM_STATE`."""
    with RANDOM_STATE:
        torch.manual_seed(seed)
        model = build()
    return model, train(model)


def seeded_models(seeds: Sequence[int], build: Callable[[], nn.Module]) -> list[nn.Module]:
    """One model per seed of an ensemble, each built after ``torch.manual_seed(seed)``: the models
    :func:`seeded_training` would build run by run (holding :data:`RANDOM_STATE`)."""
    models = []
    with RANDOM_STATE:
        for seed in seeds:
            torch.manual_seed(seed)
            models.append(build())
    return models


def record_outcome(record: dict, schema: RunSchema, outcome: Trained | FloatingPointError, train_seconds: float,
                   evaluate: Callable[[nn.Module], dict], checkpoints: Checkpoints | None = None) -> dict:
    """The record of one trained run: ``record`` with its :func:`training_record`, the metrics
    ``evaluate(model)`` returns, ``eval_seconds`` and ``error: None``; a :func:`diverged_record` for a
    training that diverged (``outcome`` is its FloatingPointError, as
    :func:`~setfuncs.ensemble.fit_ensemble` gives it) or an evaluation that raised FloatingPointError
    (non-finite predictions). ``checkpoints``: the test metric recorded during training."""
    if isinstance(outcome, FloatingPointError):
        return diverged_record(record, schema, outcome, train_seconds=train_seconds)
    model, log = outcome
    trained = {**record, **training_record(log, train_seconds, checkpoints)}
    start = time.perf_counter()
    try:
        metrics = evaluate(model)
    except FloatingPointError as err:
        return diverged_record(trained, schema, err, eval_seconds=time.perf_counter() - start)
    return {**trained, **metrics, "eval_seconds": time.perf_counter() - start, "error": None}


def run_protocol(record: dict, schema: RunSchema, train: Callable[[], Trained],
                 evaluate: Callable[[nn.Module], dict], checkpoints: Checkpoints | None = None) -> dict:
    """One run: ``train()`` (the experiment's :func:`seeded_training`, which records its test metric
    at ``checkpoints``), timed, then :func:`record_outcome`. ``record`` names the run (``spec``,
    ``seed`` and the experiment's fields)."""
    start = time.perf_counter()
    try:
        outcome: Trained | FloatingPointError = train()
    except FloatingPointError as err:
        outcome = err
    return record_outcome(record, schema, outcome, time.perf_counter() - start, evaluate, checkpoints)


def check_budget(budget: object, kind: type, what: str) -> None:
    """A ValueError unless ``budget`` is a ``kind`` (the experiment's ``Budget``), naming ``what``."""
    if not isinstance(budget, kind):
        raise ValueError(f"budget must be a {what} Budget (QUICK, MEDIUM, FULL or your own), got "
                         f"{type(budget).__name__}")


def run_experiment(run_one: Callable[..., dict], tasks: Sequence[tuple], header: dict, schema: RunSchema,
                   out_path: str | os.PathLike, engine: "Engine", restart: bool, progress: bool, desc: str,
                   identity: dict | None = None, run_many: Callable[[list[tuple]], list[dict]] | None = None,
                   concurrent_safe: bool = False) -> dict:
    """Run an experiment's sweep (:func:`~setfuncs.experiments.engine.sweep.run_sweep`): ``tasks`` with
    ``run_one`` (or ``run_many`` per configuration on a GPU; several configurations at once if
    ``concurrent_safe`` and the engine's ``concurrent`` say so), the file's ``header`` (provenance),
    its identity (default: :func:`~setfuncs.experiments.provenance.sweep_identity` of the header),
    and ``schema``, which a resumed file must keep."""
    from .engine import run_sweep

    identity = sweep_identity(header) if identity is None else identity
    return run_sweep(run_one, tasks, out_path, header, identity, engine, restart, progress, desc=desc,
                     run_many=run_many, schema=schema, concurrent_safe=concurrent_safe)
