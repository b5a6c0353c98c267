r"""Training AIR by maximising the ELBO (:meth:`~setfuncs.experiments.attention.air.AIR.elbo`).

Every Adam step draws ``budget.batch`` training canvases (with replacement) and, for a set
localiser, a fresh population of ``budget.particles`` particles per canvas, and minimises

.. math::
    \text{loss} = -\frac{1}{B\,HW} \sum_{b=1}^{B} \mathcal{L}(x_b),

the negative ELBO per pixel (so the gradient-norm clip ``budget.clip`` does not depend on the
canvas size), with gradient-norm clipping.
"""

from __future__ import annotations

import numpy as np
import torch
from tqdm.auto import tqdm

from setfuncs.steps import resolve_device

from .air import AIR
from .budget import Budget
from .particles import sample_particles

__all__ = ["make_air", "train_air"]


def make_air(spec: str, budget: Budget, canvas_size: int) -> AIR:
    """The AIR model of localiser ``spec`` (``"image"`` or a Deep Set spec) at ``budget``'s sizes."""
    return AIR(spec, canvas_size=canvas_size, glimpse_size=budget.glimpse_size, what_features=budget.what_features,
               hidden=budget.hidden, set_hidden=budget.set_hidden, equivariant_layers=budget.equivariant_layers,
               steps=budget.recurrent_steps, readout=budget.readout)


def train_air(model: AIR, canvases: np.ndarray, budget: Budget, seed: int, progress: bool = False,
              desc: str = "train", device: str = "cpu", read_every: int = 50) -> list[float]:
    """Train ``model`` in place on ``canvases [M, H, W]``; the loss (negative ELBO per pixel) at every step.

    Batches and particles come from ``torch.Generator().manual_seed(seed)`` on the CPU; the
    continuous latents' noise from torch's global generator of ``device`` (seed it before for a
    reproducible run). The model trains on ``device`` (moved there) and the losses stay there, read
    every ``read_every`` steps. Raises FloatingPointError if the loss becomes NaN or infinite (the
    message names the first such step).
    """
    target = resolve_device(device, model)
    model.to(target)
    data = torch.as_tensor(canvases, dtype=torch.float32)
    pixels = data.shape[1] * data.shape[2]
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=budget.lr)
    model.train()
    losses = torch.empty(budget.steps, device=target)
    read = 0
    for step in tqdm(range(budget.steps), desc=desc, disable=not progress, leave=False):
        index = torch.randint(len(data), (budget.batch,), generator=generator)
        batch = data[index]
        particles = sample_particles(batch, budget.particles, generator) if model.reads_particles else None
        batch = batch.to(target, non_blocking=True)
        particles = None if particles is None else particles.to(target, non_blocking=True)
        elbo, _ = model.elbo(batch, particles)
        loss = -elbo.mean() / pixels
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), budget.clip)
        optimiser.step()
        losses[step] = loss.detach()
        if step + 1 - read >= read_every or step + 1 == budget.steps:
            chunk = losses[read:step + 1].cpu()
            bad = (~torch.isfinite(chunk)).nonzero()
            if len(bad):
                raise FloatingPointError(f"the loss became {float(chunk[bad[0, 0]])} at step "
                                         f"{read + int(bad[0, 0])} of {model.spec}")
            read = step + 1
    model.eval()
    return losses.cpu().tolist()
