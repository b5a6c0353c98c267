r"""Training of the point-cloud classifier as in Deep Sets' reference code.

Epochs over the training clouds in a fresh random order, batches of 64 (an incomplete last batch
is dropped), every batch standardised and augmented
(:mod:`~setfuncs.experiments.pointcloud.preprocess`), cross-entropy loss, Adam with learning rate
:math:`10^{-3}`, weight decay :math:`10^{-7}` and :math:`\epsilon = 10^{-3}`, the learning rate
multiplied by 0.1 after 40 % and after 80 % of the steps (the reference: after epochs 400 and 800
of 1,000), gradients clipped to norm 5. The loop itself is :func:`setfuncs.train.fit`.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from setfuncs.steps import TrainingLog
from setfuncs.train import Batch, fit

from ..protocol import Checkpoints, checkpoint_arguments
from .budget import Budget
from .preprocess import augment, standardize

__all__ = ["training_batches", "milestones", "train_classifier"]


def training_batches(clouds: np.ndarray, labels: np.ndarray, batch: int, rng: np.random.Generator
                     ) -> Callable[[], Batch]:
    """A sampler for :func:`~setfuncs.train.fit`: each call returns the next batch ``(x, y, None)``
    of a shuffled epoch, standardised and augmented with ``rng``; a new epoch starts in a new order
    once fewer than ``batch`` clouds are left."""
    if len(clouds) != len(labels) or len(clouds) < batch:
        raise ValueError(f"need at least one batch ({batch}) of clouds with one label each, got "
                         f"{len(clouds)} clouds and {len(labels)} labels")
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


def train_classifier(model: nn.Module, clouds: np.ndarray, labels: np.ndarray, budget: Budget, seed: int,
                     progress: bool = True, desc: str = "training", device: str = "cpu",
                     checkpoints: Checkpoints | None = None) -> TrainingLog:
    """Train ``model`` on the clouds ``[M, N, 3]`` with ``budget``'s schedule; the loss of every step.

    Uses ``budget``'s ``steps, batch, lr, clip, weight_decay, eps, decay_at, decay``; batches are
    drawn with ``numpy.random.default_rng(seed)`` on the CPU and trained on ``device`` (:func:`~setfuncs.train.fit`);
    ``checkpoints`` record a test metric during training. Raises FloatingPointError if the loss diverges.
    """
    sample = training_batches(clouds, labels, budget.batch, np.random.default_rng(seed))
    return fit(model, sample, nn.functional.cross_entropy, budget.steps, lr=budget.lr,
               weight_decay=budget.weight_decay, clip=budget.clip, progress=progress, desc=desc,
               eps=budget.eps, milestones=milestones(budget.steps, budget.decay_at), gamma=budget.decay,
               device=device, **checkpoint_arguments(checkpoints))
