r"""Training of the point-cloud classifier as in Deep Sets' reference code.

Epochs over the training clouds in a fresh random order, batches of 64 (an incomplete last batch
is dropped), every batch standardised and augmented
(:mod:`~setfuncs.experiments.pointcloud.preprocess`), cross-entropy loss, Adam with learning rate
:math:`10^{-3}`, weight decay :math:`10^{-7}` and :math:`\epsilon = 10^{-3}`, the learning rate
multiplied by 0.1 after 40 % and after 80 % of the steps (the reference: after epochs 400 and 800
of 1,000), gradients clipped to norm 5 (:func:`optimizer_settings`). The loop itself is
:func:`setfuncs.train.fit`; :func:`train_classifier_ensemble` trains several seeds as one ensemble
(:func:`setfuncs.ensemble.fit_ensemble`) on the same batches, made on the device
(:mod:`~setfuncs.experiments.pointcloud.stream`).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from setfuncs.ensemble import fit_ensemble
from setfuncs.steps import TrainingLog, resolve_device
from setfuncs.train import Batch, fit

from ..protocol import Checkpoints, checkpoint_arguments, ensemble_checkpoint_arguments
from .budget import Budget
from .preprocess import augment, standardize
from .stream import device_clouds, ensemble_stream, stacked_sampler

__all__ = ["training_batches", "milestones", "optimizer_settings", "train_classifier", "train_classifier_ensemble"]


def _check_clouds(clouds: np.ndarray, labels: np.ndarray, batch: int) -> None:
    if len(clouds) != len(labels) or len(clouds) < batch:
        raise ValueError(f"need at least one batch ({batch}) of clouds with one label each, got "
                         f"{len(clouds)} clouds and {len(labels)} labels")


def training_batches(clouds: np.ndarray, labels: np.ndarray, batch: int, rng: np.random.Generator
                     ) -> Callable[[], Batch]:
    """A sampler for :func:`~setfuncs.train.fit`: each call returns the next batch ``(x, y, None)``
    of a shuffled epoch, standardised and augmented with ``rng``; a new epoch starts in a new order
    once fewer than ``batch`` clouds are left."""
    _check_clouds(clouds, labels, batch)
    order, position = rng.permutation(len(clouds)), 0

    def sample() -> Batch:
        nonlocal order, position
        if position + batch > len(clouds):
            order, position = rng.permutation(len(clouds)), 0
        chosen = order[position:position + batch]
        position += batch
        x = augment(standardize(clouds[chosen]), rng)
        return torch.from_numpy(x), torch.from_numpy(labels[chosen]), None

    return sample


def milestones(steps: int, fractions: Sequence[float]) -> list[int]:
    """The steps after which the learning rate decays: ``round(f * steps)`` for every fraction ``f``."""
    return [round(f * steps) for f in fractions]


def optimizer_settings(budget: Budget) -> dict:
    r"""The keyword arguments of :func:`~setfuncs.train.fit` and :func:`~setfuncs.ensemble.fit_ensemble`
    that make ``budget``'s optimiser: Adam (``lr``, ``weight_decay``, ``eps``), clipping to norm
    ``clip``, and the schedule :math:`\eta_t = \eta\,\gamma^{|\{m \in M:\ m \le t\}|}` with
    :math:`M` = :func:`milestones` of ``decay_at`` and :math:`\gamma` = ``decay``."""
    return {"lr": budget.lr, "weight_decay": budget.weight_decay, "eps": budget.eps, "clip": budget.clip,
            "milestones": milestones(budget.steps, budget.decay_at), "gamma": budget.decay}


def train_classifier(model: nn.Module, clouds: np.ndarray, labels: np.ndarray, budget: Budget, seed: int,
                     progress: bool = True, desc: str = "training", device: str = "cpu",
                     checkpoints: Checkpoints | None = None) -> TrainingLog:
    """Train ``model`` on the clouds ``[M, N, 3]`` with ``budget``'s schedule; the loss of every step.

    Uses ``budget``'s ``steps, batch, lr, clip, weight_decay, eps, decay_at, decay``; batches are
    drawn with ``numpy.random.default_rng(seed)`` on the CPU and trained on ``device`` (:func:`~setfuncs.train.fit`);
    ``checkpoints`` record a test metric during training. Raises FloatingPointError if the loss diverges.
    """
    sample = training_batches(clouds, labels, budget.batch, np.random.default_rng(seed))
    return fit(model, sample, nn.functional.cross_entropy, budget.steps, progress=progress, desc=desc,
               device=device, **optimizer_settings(budget), **checkpoint_arguments(checkpoints))


def train_classifier_ensemble(models: Sequence[nn.Module], clouds: np.ndarray, labels: np.ndarray, budget: Budget,
                              seeds: Sequence[int], progress: bool = True, desc: str = "ensemble",
                              device: str = "cpu", checkpoints: Sequence[Checkpoints] | None = None
                              ) -> list[TrainingLog | FloatingPointError]:
    r"""Train ``models[s]`` on the batches :func:`train_classifier` draws with seed ``seeds[s]``, all
    as one ensemble (:func:`~setfuncs.ensemble.fit_ensemble`) with ``budget``'s optimiser
    (:func:`optimizer_settings`, clipping per model); per model its losses, or the error of a
    diverged one.

    Model :math:`s` minimises its own cross-entropy; the ensemble's step is the gradient of
    :math:`\sum_s \ell_s(\theta_s)`, so each model takes the steps it would take alone. The batches
    are made on ``device`` from one copy of the standardised clouds and each seed's draws
    (:mod:`~setfuncs.experiments.pointcloud.stream`, cached per process), outside the step; the step
    reads no tensor values, so on a GPU it is one CUDA graph. ``checkpoints``: one per model, all at
    the same steps, each recording its model's test metric during training.

    Dropout draws its masks per model (``torch.vmap(randomness="different")``) from torch's
    generator as it stands after the last model was built, so a model with dropout does not repeat
    its one-by-one training, and its masks depend on the ensemble it trains in; without dropout the
    models train as one by one, up to float rounding.
    """
    _check_clouds(clouds, labels, budget.batch)
    if len(seeds) != len(models):
        raise ValueError(f"train_classifier_ensemble needs one seed per model: {len(models)} models, "
                         f"{len(seeds)} seeds")
    target = resolve_device(device)
    stream = ensemble_stream(tuple(int(s) for s in seeds), len(clouds), budget.steps, budget.batch, str(target))
    sample = stacked_sampler(device_clouds(clouds, target), torch.from_numpy(labels).to(target), stream)
    return fit_ensemble(models, sample, nn.functional.cross_entropy, budget.steps, progress=progress, desc=desc,
                        device=target, **optimizer_settings(budget),
                        **ensemble_checkpoint_arguments(checkpoints, len(models)))
