r"""Training AIR by maximising the ELBO (:meth:`~setfuncs.experiments.attention.air.AIR.elbo`).

Every Adam step draws ``budget.batch`` training canvases (with replacement) and, for a set
localiser, a fresh population of ``budget.particles`` particles per canvas, and minimises

.. math::
    \text{loss} = -\frac{1}{B\,HW} \sum_{b=1}^{B} \mathcal{L}(x_b),

the negative ELBO per pixel (so the gradient-norm clip ``budget.clip`` does not depend on the
canvas size), with gradient-norm clipping.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import Tensor

from setfuncs.steps import TrainingLog
from setfuncs.train import Batch, fit

from ..protocol import Checkpoints, checkpoint_arguments
from .air import AIR
from .budget import Budget
from .particles import sample_particles

__all__ = ["make_air", "canvas_batches", "negative_elbo_per_pixel", "train_air"]


def make_air(spec: str, budget: Budget, canvas_size: int) -> AIR:
    """The AIR model of localiser ``spec`` (``"image"`` or a Deep Set spec) at ``budget``'s sizes."""
    return AIR(spec, canvas_size=canvas_size, glimpse_size=budget.glimpse_size, what_features=budget.what_features,
               hidden=budget.hidden, set_hidden=budget.set_hidden, equivariant_layers=budget.equivariant_layers,
               steps=budget.recurrent_steps, readout=budget.readout)


def canvas_batches(canvases: np.ndarray, batch: int, particles: int | None, generator: torch.Generator
                   ) -> Callable[[], Batch]:
    """A sampler for :func:`~setfuncs.train.fit`: each call draws ``batch`` canvases ``[B, H, W]``
    with replacement and, when ``particles`` is not None, a fresh population of that many particles
    per canvas (:func:`~setfuncs.experiments.attention.particles.sample_particles`), both with
    ``generator``; returns ``(canvases, particles or None, None)``."""
    data = torch.as_tensor(canvases, dtype=torch.float32)

    def sample() -> Batch:
        chosen = data[torch.randint(len(data), (batch,), generator=generator)]
        return chosen, None if particles is None else sample_particles(chosen, particles, generator), None

    return sample


def negative_elbo_per_pixel(model: AIR, canvases: Tensor, particles: Tensor | None, mask: None = None) -> Tensor:
    r"""The training objective (an ``Objective`` of :func:`~setfuncs.train.fit`): the negative ELBO per pixel,
    :math:`-\frac{1}{B\,HW} \sum_b \mathcal{L}(x_b)`, of ``canvases [B, H, W]`` (and their
    ``particles`` for a set localiser)."""
    elbo, _ = model.elbo(canvases, particles)
    return -elbo.mean() / (canvases.shape[1] * canvases.shape[2])


def train_air(model: AIR, canvases: np.ndarray, budget: Budget, seed: int, progress: bool = False,
              desc: str = "train", device: str = "cpu", read_every: int = 50,
              checkpoints: Checkpoints | None = None) -> TrainingLog:
    """Train ``model`` in place on ``canvases [M, H, W]`` with :func:`~setfuncs.train.fit`; the loss
    (negative ELBO per pixel) at every step.

    Batches and particles come from ``torch.Generator().manual_seed(seed)`` on the CPU
    (:func:`canvas_batches`); the continuous latents' noise from torch's global generator of
    ``device`` (seed it before for a reproducible run). The steps run eagerly (the latents are drawn
    anew at every step); ``checkpoints`` record a test metric during training. Raises
    FloatingPointError if the loss becomes NaN or infinite (the message names the first such step).
    """
    sample = canvas_batches(canvases, budget.batch, budget.particles if model.reads_particles else None,
                            torch.Generator().manual_seed(seed))
    return fit(model, sample, None, budget.steps, lr=budget.lr, clip=budget.clip, progress=progress, desc=desc,
               device=device, graph=False, read_every=read_every, objective=negative_elbo_per_pixel,
               **checkpoint_arguments(checkpoints))
