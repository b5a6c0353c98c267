r"""Runs and sweeps of the point-cloud experiment (Table 2 of the paper).

**Columns.** The ten model specs of Table 2 (``setfuncs.TABLE2_SPECS``) and the two with LSE
replaced by log-mean-exp (:data:`LME_COLUMNS`), each a
:class:`~setfuncs.experiments.pointcloud.model.PointCloudClassifier`; all runs of one budget share
every hyper-parameter, as in the paper, which fixed Deep Sets' and exchanged only the
aggregations. The classifier's output layer starts at the log class frequencies of the training
clouds, its weights scaled by :data:`~setfuncs.model.HEAD_SCALE` (:func:`~setfuncs.model.init_head`).

**Data.** :class:`Data` names the clouds: ``"shapes"``, the package's offline shapes
(:mod:`~setfuncs.experiments.pointcloud.shapes`, ``budget.train_per_class`` training and
``budget.test_size`` test clouds per class), or ``"modelnet40"`` read from ``root``
(:mod:`~setfuncs.experiments.pointcloud.modelnet`, both splits whole). Both are sampled with
:data:`DATA_SEED`: training clouds with ``budget.points`` particles, test clouds with
:func:`~setfuncs.experiments.pointcloud.budget.points_per_test_cloud` particles (2,000 for MEDIUM
and FULL). Each process loads them once (cached); a training split with fewer clouds than one
batch is refused there, before any run starts, in one line that says what to change.

**Identity.** A results file's identity holds the data's (:func:`data_identity`): for ModelNet40
the class and cloud counts and the SHA-256 of its mesh files
(:func:`~setfuncs.experiments.pointcloud.modelnet.mesh_digest`), so that a sweep resumes on a moved
copy of its folder but is refused on another folder; the provenance names the folder's resolved
path. For the offline shapes, the counts and the SHA-256 of the generator's parameters (its
description and :data:`DATA_SEED`; the budget, in the identity too, fixes the counts and points).

**A run** trains at ``budget.points`` particles (:mod:`~setfuncs.experiments.pointcloud.train`)
and records the test accuracy at every size of
:func:`~setfuncs.experiments.pointcloud.budget.evaluation_sizes`
(:mod:`~setfuncs.experiments.pointcloud.evaluate`), its training throughput in clouds per
second, and whether it collapsed (:mod:`~setfuncs.experiments.collapse`: the spread of its class
probabilities at 1,000 particles against the one-hot labels).

**Seeds.** Run ``seed`` initialises the model (and its dropout) after ``torch.manual_seed(seed)``
and shuffles and augments its batches with ``numpy.random.default_rng(TRAIN_SEED + seed)``; the
data (:data:`DATA_SEED`) and the test subsets (:data:`~setfuncs.experiments.sweeps.TEST_SEED`)
are the same for every run.

**On a GPU** (``engine.device`` ``cuda``) the missing seeds of each column train together as one
ensemble (:func:`run_ensemble`, :func:`train_ensemble`), column after column: every seed's model
is initialised as in :func:`run_one`, and its batches are the ones :func:`run_one` draws, made on
the device from the seed's draws (:mod:`~setfuncs.experiments.pointcloud.stream`, drawn once per
worker process and shared by the columns). The records are :func:`run_one`'s, plus ``ensemble``
(its size and training time). Dropout then draws its masks per model from one generator
(``torch.vmap(randomness="different")``), so with dropout an ensemble's run is not the run
:func:`run_one` trains with the same seed, though it is one of the same distribution.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np
import torch

import setfuncs as sf
from setfuncs.model import HEAD_SCALE, init_head, parameter_count, parse_spec
from setfuncs.steps import TrainingLog

from ..collapse import collapse_record
from ..protocol import Checkpoints, checkpoint_steps, run_protocol, seeded_models, seeded_training
from ..provenance import sweep_provenance
from ..schema import RunSchema
from ..sweeps import TEST_SEED, TRAIN_SEED, run_configuration_ensemble
from ..tasks import DataRun
from .budget import TABLE_SIZES, Budget, evaluation_sizes, points_per_test_cloud
from .evaluate import accuracy, accuracy_by_population_size, probabilities
from .model import PointCloudClassifier
from .modelnet import LAYOUT, MODELNET_URL, load_modelnet40, mesh_digest
from .preprocess import CLIP, ROTATION_RANGE, SCALE_RANGE
from .shapes import shapes_description, synthetic_shapes
from .train import milestones, train_classifier, train_classifier_ensemble

__all__ = ["DATA_SETS", "DATA_SEED", "NAME", "RUN_SCHEMA", "LME_COLUMNS", "COLUMNS", "Data", "PointClouds", "load_data",
           "data_identity", "make_model", "train_model", "train_ensemble", "test_checkpoints", "evaluate_run", "run_one",
           "run_ensemble", "provenance"]

#: The data sets a sweep can use.
DATA_SETS = ("shapes", "modelnet40")
#: Seed of the sampled clouds (meshes and particles) of both data sets.
DATA_SEED = 0
#: The ``experiment`` field of a results file.
NAME = "point_cloud_classification"
#: What every finished run records (:mod:`~setfuncs.experiments.schema`), checked where a file is read.
RUN_SCHEMA = RunSchema(metrics=("accuracy",), maps=("accuracy_by_population_size",),
                       details=("parameters", "clouds_per_second"))
#: Table 2's two LSE columns with log-mean-exp in place of LSE (not in the paper).
LME_COLUMNS = ("max/r-lme", "r-lme/r-lme")
#: Every column a sweep runs by default, Table 2's ten and then :data:`LME_COLUMNS`.
COLUMNS = tuple(sf.TABLE2_SPECS) + LME_COLUMNS


@dataclass(frozen=True)
class Data:
    """The clouds of a sweep: ``name`` in :data:`DATA_SETS`; for ModelNet40 its folder ``root``
    and where its sampled clouds are cached (``cache_dir``, default ``root``)."""

    name: str = "shapes"
    root: str | None = None
    cache_dir: str | None = None

    def __post_init__(self) -> None:
        if self.name not in DATA_SETS:
            raise ValueError(f"data must be one of {DATA_SETS}, got {self.name!r}")
        if self.name == "modelnet40" and self.root is None:
            raise ValueError(f"the modelnet40 data needs root, the folder of ModelNet40.zip from "
                             f"{MODELNET_URL} unpacked (<root>/<class>/{{train,test}}/*.off)")
        if self.name == "shapes" and (self.root is not None or self.cache_dir is not None):
            raise ValueError("the offline shapes are generated, not read: leave root and cache_dir unset")


class PointClouds(NamedTuple):
    """Training and test clouds ``[M, N, 3]`` float32 with labels ``[M]`` int64, and the class names."""

    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    class_names: list[str]


@lru_cache(maxsize=4)
def load_data(data: Data, budget: Budget) -> PointClouds:
    """The training clouds at ``budget.points`` and the test clouds at ``points_per_test_cloud(budget)``
    particles (a progress bar while ModelNet40's meshes are first sampled). A ValueError, in one line
    that names the folder (or the budget), the clouds of each split, the batch and the fix, if the
    training clouds do not fill one batch of ``budget``: no run could train on them."""
    if data.name == "shapes":
        train_x, train_y, names = synthetic_shapes(budget.train_per_class, "train", budget.points, DATA_SEED)
        test_x, test_y, _ = synthetic_shapes(budget.test_size, "test", points_per_test_cloud(budget), DATA_SEED)
        return _one_batch_at_least(PointClouds(train_x, train_y, test_x, test_y, names), data, budget)
    train_x, train_y, names = load_modelnet40(data.root, "train", budget.points, DATA_SEED, data.cache_dir)
    test_x, test_y, test_names = load_modelnet40(data.root, "test", points_per_test_cloud(budget), DATA_SEED,
                                                 data.cache_dir)
    if test_names != names:
        raise ValueError(f"the train and test splits of {data.root} have different classes: "
                         f"{sorted(set(names) ^ set(test_names))}; every class needs both folders")
    return _one_batch_at_least(PointClouds(train_x, train_y, test_x, test_y, names), data, budget)


def _one_batch_at_least(clouds: PointClouds, data: Data, budget: Budget) -> PointClouds:
    """``clouds`` if their training split fills one batch of ``budget``; else the ValueError of :func:`load_data`."""
    train = len(clouds.train_x)
    if train >= budget.batch:
        return clouds
    held = (f"{train} training and {len(clouds.test_x)} test clouds ({len(clouds.class_names)} classes), fewer "
            f"training clouds than one batch of the {budget.name} budget needs ({budget.batch})")
    if data.name == "modelnet40":
        raise ValueError(f"the ModelNet40 folder {Path(data.root).resolve()} holds {held}, so no run can train on "
                         f"it: add meshes to its <class>/train folders ({LAYOUT}; the whole of ModelNet40 has 9,843 "
                         f"training meshes), or use a budget whose batch is at most {train}")
    raise ValueError(f"the offline shapes of the {budget.name} budget are {held}, so no run can train on them: raise "
                     f"train_per_class to at least {-(-budget.batch // len(clouds.class_names))}, or lower the batch "
                     f"to at most {train}")


def _digest(value: object) -> str:
    """The SHA-256 (hex) of ``value`` as canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def data_identity(data: Data, budget: Budget) -> dict:
    """What two sittings of a sweep must share of their clouds (a results file's ``identity["data"]``):
    the data set's ``name``, its ``classes``, ``train_clouds`` and ``test_clouds``, and a digest of
    its contents. ModelNet40: ``meshes_sha256``, the SHA-256 of its mesh files' relative paths and
    bytes (:func:`~setfuncs.experiments.pointcloud.modelnet.mesh_digest`): a moved copy of the folder
    is the same data, a folder with other meshes is not; where the folder is stands in the provenance.
    The offline shapes: ``generator_sha256``, the SHA-256 of the generator's parameters
    (:func:`~setfuncs.experiments.pointcloud.shapes.shapes_description`, :data:`DATA_SEED`, the clouds
    per class and points of each split); machine-independent, where the clouds' last bits might not be."""
    clouds = load_data(data, budget)
    counts = {"classes": len(clouds.class_names), "train_clouds": len(clouds.train_x),
              "test_clouds": len(clouds.test_x)}
    if data.name == "modelnet40":
        return {"name": data.name, **counts, "meshes_sha256": mesh_digest(data.root)}
    generator = {"description": shapes_description(), "class_names": clouds.class_names, "seed": DATA_SEED,
                 "train": [budget.train_per_class, budget.points],
                 "test": [budget.test_size, points_per_test_cloud(budget)]}
    return {"name": data.name, **counts, "generator_sha256": _digest(generator)}


def make_model(spec: str, classes: int, budget: Budget, labels: np.ndarray | None = None) -> PointCloudClassifier:
    """The classifier of one column at ``budget``'s width, depth and dropout; with the training
    ``labels``, its output layer starts at their log class frequencies (:func:`~setfuncs.model.init_head`)."""
    model = PointCloudClassifier(classes, spec, hidden=budget.hidden, equivariant_layers=budget.equivariant_layers,
                                 dropout=budget.dropout, steps=budget.recurrent_steps)
    if labels is not None:
        frequencies = np.bincount(labels, minlength=classes) / len(labels)
        if not bool((frequencies > 0).all()):
            raise ValueError(f"every one of the {classes} classes needs training clouds; class(es) "
                             f"{np.flatnonzero(frequencies == 0).tolist()} have none")
        init_head(model.process, np.log(frequencies))
    return model


def train_model(spec: str, seed: int, budget: Budget, clouds: PointClouds, progress: bool = True,
                device: str = "cpu", checkpoints: Checkpoints | None = None
                ) -> tuple[PointCloudClassifier, TrainingLog]:
    """Train one column with one seed on ``device`` (:func:`~setfuncs.experiments.protocol.seeded_training`):
    the model (in eval mode, on ``device``) and its loss at every step; ``checkpoints``
    (:func:`test_checkpoints`) record the test accuracy during training."""
    return seeded_training(seed, lambda: make_model(spec, len(clouds.class_names), budget, clouds.train_y),
                           lambda model: train_classifier(model, clouds.train_x, clouds.train_y, budget,
                                                          TRAIN_SEED + seed, progress, desc=f"{spec} seed {seed}",
                                                          device=device, checkpoints=checkpoints))


def train_ensemble(spec: str, seeds: Sequence[int], budget: Budget, clouds: PointClouds, progress: bool = True,
                   device: str = "cpu", checkpoints: Sequence[Checkpoints] | None = None
                   ) -> list[tuple[PointCloudClassifier, TrainingLog | FloatingPointError]]:
    """Train one column with ``seeds`` as one ensemble on ``device``
    (:func:`~setfuncs.experiments.pointcloud.train.train_classifier_ensemble`): per seed, the model
    (in eval mode, on ``device``) and its losses, or the error of a diverged run.

    Seed ``s``'s model is built after ``torch.manual_seed(s)`` and trains on the batches of
    ``numpy.random.default_rng(TRAIN_SEED + s)``, as in :func:`train_model`; without dropout
    (``budget.dropout`` 0) it trains as there, up to float rounding; with dropout its masks differ
    (:mod:`~setfuncs.experiments.pointcloud.sweep`). ``checkpoints``: one :func:`test_checkpoints` per seed.
    """
    if len(seeds) == 0:
        raise ValueError("train_ensemble needs at least one seed, got none")
    models = seeded_models(seeds, lambda: make_model(spec, len(clouds.class_names), budget, clouds.train_y))
    logs = train_classifier_ensemble(models, clouds.train_x, clouds.train_y, budget, [TRAIN_SEED + s for s in seeds],
                                     progress, f"{spec} seeds {seeds[0]}..{seeds[-1]}", device, checkpoints)
    return list(zip(models, logs))


def test_checkpoints(budget: Budget, clouds: PointClouds) -> Checkpoints:
    """The test accuracy at 1,000 particles (Table 2's first size) at the
    :func:`~setfuncs.experiments.protocol.checkpoint_steps` of ``budget``, on the model's device."""
    return Checkpoints("test_accuracy", checkpoint_steps(budget.steps),
                       lambda model: accuracy(model, clouds.test_x, clouds.test_y, TABLE_SIZES[0]))


def evaluate_run(model: PointCloudClassifier, budget: Budget, clouds: PointClouds, device: str = "cpu") -> dict:
    """The metrics of a trained ``model``, on ``device`` (a run trained alone: the CPU; an ensemble: its
    training device): ``parameters`` (trainable), ``accuracy`` (at 1,000 particles),
    ``accuracy_by_population_size`` (``{"10": ..., "1000": ...}``, fractions in [0, 1]),
    ``spread_ratio`` and ``collapsed`` (:func:`~setfuncs.experiments.collapse.collapse_record` at
    1,000 particles)."""
    model.to(device)
    by_size = accuracy_by_population_size(model, clouds.test_x, clouds.test_y, evaluation_sizes(budget))
    probs = torch.from_numpy(probabilities(model, clouds.test_x, TABLE_SIZES[0]))
    labels = torch.nn.functional.one_hot(torch.from_numpy(clouds.test_y), len(clouds.class_names))
    return {"parameters": parameter_count(model), "accuracy": by_size[str(TABLE_SIZES[0])],
            "accuracy_by_population_size": by_size, **collapse_record(probs, labels)}


def run_one(spec: str, seed: int, budget: Budget, data: Data, progress: bool = False, device: str = "cpu") -> dict:
    """Train one column with one seed on ``device`` and evaluate it on the CPU; a JSON-friendly record
    (:func:`~setfuncs.experiments.protocol.run_protocol`).

    Keys: ``spec, equivariant, final, seed, data, epochs``, the training record (``train_seconds``,
    ``final_train_loss``, ``training``, ``learning_curve`` with the test accuracy at five checkpoints:
    :func:`~setfuncs.experiments.protocol.training_record`, :func:`test_checkpoints`), ``clouds_per_second`` (training
    throughput), the keys of :func:`evaluate_run`, ``eval_seconds`` and ``error`` (None, or the
    message of a diverged training, whose metrics are then None).
    """
    clouds = load_data(data, budget)
    checkpoints = test_checkpoints(budget, clouds)
    result = run_protocol(_run_name(spec, seed, budget, data, clouds), RUN_SCHEMA,
                          lambda: train_model(spec, seed, budget, clouds, progress, device, checkpoints),
                          lambda model: evaluate_run(model, budget, clouds), checkpoints)
    return _with_throughput(result, budget)


def _run_name(spec: str, seed: int, budget: Budget, data: Data, clouds: PointClouds) -> dict:
    """What names a run in its record: ``spec, equivariant, final, seed, data, epochs``."""
    equivariant, final = parse_spec(spec)
    return {"spec": spec, "equivariant": equivariant, "final": final, "seed": seed, "data": data.name,
            "epochs": budget.steps * budget.batch / len(clouds.train_x)}


def _with_throughput(result: dict, budget: Budget) -> dict:
    """``result`` with ``clouds_per_second`` = steps x batch / ``train_seconds`` (None for a run that diverged)."""
    trained = result["training"] is not None
    return {**result, "clouds_per_second": budget.steps * budget.batch / result["train_seconds"] if trained else None}


def run_ensemble(tasks: Sequence[tuple]) -> list[dict]:
    """:func:`run_one` for several seeds of one column, trained as one ensemble (:func:`train_ensemble`,
    each seed with its :func:`test_checkpoints`) and evaluated one by one on the training device, so
    that the evaluation does not set the pace of a GPU sweep (predictions equal the CPU's up to float
    rounding) (:func:`~setfuncs.experiments.sweeps.run_configuration_ensemble`); ``tasks`` are :func:`run_one`'s
    arguments (:class:`~setfuncs.experiments.tasks.DataRun`), equal but for the seed.

    The records are :func:`run_one`'s plus ``ensemble`` (size and training time); ``train_seconds``
    is the ensemble's training time over its size, so ``clouds_per_second`` is the ensemble's.
    """
    if not tasks:
        raise ValueError("run_ensemble needs at least one task, run_one's arguments (spec, seed, budget, data, "
                         "progress, device)")
    runs = [DataRun(*task) for task in tasks]
    run = runs[0]
    budget = run.budget
    clouds = load_data(run.data, budget)
    checkpoints = [test_checkpoints(budget, clouds) for _ in runs]
    records = run_configuration_ensemble(
        runs, RUN_SCHEMA,
        lambda seeds: train_ensemble(run.spec, seeds, budget, clouds, run.progress, run.device, checkpoints),
        lambda model: evaluate_run(model, budget, clouds, run.device), checkpoints,
        record=lambda each: _run_name(each.spec, each.seed, budget, each.data, clouds))
    return [_with_throughput(record, budget) for record in records]


def provenance(budget: Budget, runs: int, specs: Sequence[str], data: Data) -> dict:
    """Command line, budget, data, model, optimiser, evaluation, seeds, versions and hardware of a sweep."""
    clouds = load_data(data, budget)
    description = ({"name": "shapes", **shapes_description()} if data.name == "shapes" else
                   {"name": "modelnet40", "root": str(Path(data.root).resolve()), "source": MODELNET_URL,
                    "sampling": "uniform on the surface, area-weighted (trimesh.sample.sample_surface)",
                    "seeds": f"mesh i of a split (sorted files) numpy default_rng([{DATA_SEED}, i])"})
    return {
        **sweep_provenance(NAME, budget, runs, specs,
                           f"model init and dropout torch.manual_seed(seed); batch order and augmentation "
                           f"numpy default_rng({TRAIN_SEED} + seed); data seed {DATA_SEED}; test subsets "
                           f"numpy default_rng([{TEST_SEED}, n])", trimesh=version("trimesh")),
        "data": {**description, "classes": len(clouds.class_names), "class_names": clouds.class_names,
                 "train_clouds": len(clouds.train_x), "test_clouds": len(clouds.test_x),
                 "train_points": budget.points, "test_points": points_per_test_cloud(budget)},
        "preprocessing": {"standardize": f"per cloud (x - mean) / std over all coordinates, after clipping "
                                         f"to +-{CLIP:g} x mean |x|",
                          "augmentation": f"training only: rotation about z by U(-{ROTATION_RANGE:.4f}, "
                                          f"{ROTATION_RANGE:.4f}) rad, then per-axis scale "
                                          f"U[{SCALE_RANGE[0]}, {SCALE_RANGE[1]})"},
        "model": {"layer": "equivariant, eq. (1): tanh((X - 1 alpha(X)) Gamma + b) (the reference's "
                           "PermEqui1_max)", "hidden": budget.hidden,
                  "equivariant_layers": budget.equivariant_layers, "activation": "tanh",
                  "head": f"output bias at the log class frequencies of the training clouds, weights x {HEAD_SCALE}",
                  "classifier": f"dropout {budget.dropout}, linear {budget.hidden}, tanh, dropout "
                                f"{budget.dropout}, linear to classes",
                  "recurrent_steps": budget.recurrent_steps},
        "optimizer": {"name": "Adam", "lr": budget.lr, "weight_decay": budget.weight_decay, "eps": budget.eps,
                      "lr_milestones": milestones(budget.steps, budget.decay_at), "lr_decay": budget.decay,
                      "clip_grad_norm": budget.clip, "batch": budget.batch, "steps": budget.steps,
                      "loss": "cross-entropy"},
        "evaluation": {"table_sizes": list(TABLE_SIZES), "sizes": list(evaluation_sizes(budget)),
                       "subsets": "uniform without replacement from the test clouds' test_points particles"},
    }
