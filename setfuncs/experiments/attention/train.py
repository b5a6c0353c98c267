r"""Training AIR by maximising the ELBO (:meth:`~setfuncs.experiments.attention.air.AIR.elbo`).

Every Adam step draws ``budget.batch`` training canvases (with replacement) and, for a set
localiser, a fresh population of ``budget.particles`` particles per canvas, and minimises

.. math::
    \text{loss} = -\frac{1}{B\,HW} \sum_{b=1}^{B} \mathcal{L}(x_b),

the negative ELBO per pixel (so the gradient-norm clip ``budget.clip`` does not depend on the
canvas size), with gradient-norm clipping.

**One by one** (:func:`train_air`): a model trains with :func:`~setfuncs.train.fit`, its batches
drawn step by step on the CPU. **As an ensemble** (:func:`train_air_ensemble`): the seeds of one
localiser train together with :func:`~setfuncs.ensemble.fit_ensemble`, model :math:`s` on its own
stream (:mod:`~setfuncs.experiments.attention.stream`), minimising
:math:`\sum_s \text{loss}_s(\theta_s)` in one step that reads no tensor values, so that on a GPU it
is one CUDA graph. Each model draws its own latents' noise inside the step
(``torch.vmap(randomness="different")``), from the device's global generator: the noise is not
the one a model draws alone, but noise of the same distribution, so an ensemble's seeds train as
they would one by one in distribution, not draw for draw.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from setfuncs.ensemble import fit_ensemble
from setfuncs.steps import TrainingLog
from setfuncs.train import Batch, fit

from ..protocol import Checkpoints, checkpoint_arguments, ensemble_checkpoint_arguments
from .air import AIR
from .budget import Budget
from .canvas import Geometry
from .stream import canvas_draw

__all__ = ["make_air", "canvas_batches", "negative_elbo_per_pixel", "train_air", "train_air_ensemble"]


def make_air(spec: str, budget: Budget, geometry: Geometry) -> AIR:
    """The AIR model of localiser ``spec`` (``"image"`` or a Deep Set spec) at ``budget``'s sizes, for
    canvases of ``geometry`` (their side, prior glimpse scale and likelihood's sigma_x)."""
    if not isinstance(geometry, Geometry):
        raise TypeError(f"make_air needs the canvases' Geometry (SURROGATE or MULTI_MNIST, or canvases.geometry), "
                        f"got {geometry!r}")
    return AIR(spec, canvas_size=geometry.canvas_size, glimpse_size=budget.glimpse_size,
               what_features=budget.what_features, hidden=budget.hidden, set_hidden=budget.set_hidden,
               equivariant_layers=budget.equivariant_layers, steps=budget.recurrent_steps, readout=budget.readout,
               where_scale=geometry.where_scale, likelihood_std=geometry.likelihood_std)


def canvas_batches(canvases: np.ndarray, batch: int, particles: int | None, generator: torch.Generator
                   ) -> Callable[[], Batch]:
    """A sampler for :func:`~setfuncs.train.fit`: each call draws ``batch`` canvases ``[B, H, W]``
    with replacement and, when ``particles`` is not None, a fresh population of that many particles
    per canvas (:func:`~setfuncs.experiments.attention.particles.sample_particles`), both with
    ``generator`` (:func:`~setfuncs.experiments.attention.stream.canvas_draw`); returns ``(canvases,
    particles or None, None)``."""
    data = torch.as_tensor(canvases, dtype=torch.float32)

    def sample() -> Batch:
        indices, drawn = canvas_draw(data, batch, particles, generator)
        return data[indices], drawn, None

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
    ``device`` (seed it before for a reproducible run). The steps run eagerly, as the committed
    one-by-one runs did (on a GPU the sweep trains the seeds as one graphed ensemble instead:
    :func:`train_air_ensemble`); ``checkpoints`` record a test metric during training. Raises
    FloatingPointError if the loss becomes NaN or infinite (the message names the first such step).
    """
    sample = canvas_batches(canvases, budget.batch, budget.particles if model.reads_particles else None,
                            torch.Generator().manual_seed(seed))
    return fit(model, sample, None, budget.steps, lr=budget.lr, clip=budget.clip, progress=progress, desc=desc,
               device=device, graph=False, read_every=read_every, objective=negative_elbo_per_pixel,
               **checkpoint_arguments(checkpoints))


def train_air_ensemble(models: Sequence[AIR], sample: Callable[[], Batch], budget: Budget, progress: bool = False,
                       desc: str = "train", device: str = "cpu", read_every: int = 50,
                       checkpoints: Sequence[Checkpoints] | None = None) -> list[TrainingLog | FloatingPointError]:
    r"""Train ``models`` (one localiser, one per seed) in place as one ensemble with
    :func:`~setfuncs.ensemble.fit_ensemble`, minimising :math:`\sum_s \text{loss}_s(\theta_s)`, where
    :math:`\text{loss}_s` is model :math:`s`'s :func:`negative_elbo_per_pixel` of its own batch; per
    model, its loss at every step, or the error of a diverged training.

    ``sample`` returns the stacked batches ``(canvases [S, B, H, W], particles [S, B, n, 2], None)``
    (:func:`~setfuncs.experiments.attention.stream.stacked_sampler`). The latents' noise comes from
    torch's global generator of ``device``, every model its own draws (module docstring). On a GPU the
    step is captured as one CUDA graph; ``checkpoints`` (one per model, all at the same steps) record
    each model's test metric during training.
    """
    return fit_ensemble(models, sample, None, budget.steps, lr=budget.lr, clip=budget.clip, progress=progress,
                        desc=desc, device=device, read_every=read_every, objective=negative_elbo_per_pixel,
                        **ensemble_checkpoint_arguments(checkpoints, len(models)))
