r"""The training streams of the attention experiment's seeds, drawn once and stacked for an ensemble.

Run ``seed`` of every localiser trains on the batches of
:func:`~setfuncs.experiments.attention.train.canvas_batches` with its own generator: at step
:math:`t` the indices :math:`i_{t,1}, \dots, i_{t,B}` of ``B`` training canvases (drawn with
replacement), then, for a set localiser, a population of ``n`` particles from each chosen canvas
(:func:`~setfuncs.experiments.attention.particles.sample_particles`), both from the one generator,
in that order, step after step (:func:`canvas_draw`, which the sampler uses too). A stream is those
draws for ``steps`` steps (:func:`canvas_stream`): exactly the batches the sampler gives one call
after another.

A stream holds canvas **indices** ``[steps, B]`` and the particles ``[steps, B, n, 2]``, not the
canvases: at MEDIUM (7,000 steps, ``B`` = 32, ``n`` = 200, 32 x 32 canvases) a seed's indices take
1.8 MB and its particles 358 MB, where the chosen canvases would take 917 MB. The seeds' streams are
stacked on the device (:func:`stack_streams`), and at step :math:`t` the ensemble reads the
canvases :math:`x_{t,s,b} = X_{i_{t,s,b}}` from one copy of the training canvases :math:`X` there
(:func:`stacked_sampler`).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np
import torch
from torch import Tensor

from .particles import sample_particles

__all__ = ["CanvasStream", "canvas_draw", "canvas_stream", "stack_streams", "stacked_sampler"]


class CanvasStream(NamedTuple):
    """The draws of a training stream: ``indices`` of the chosen canvases ``[steps, B]`` (``[steps, S,
    B]`` stacked over ``S`` seeds, int64) and their ``particles`` ``[steps, B, n, 2]`` (``[steps, S, B, n,
    2]``), or None for the image localiser, which reads none."""

    indices: Tensor
    particles: Tensor | None


def canvas_draw(canvases: Tensor, batch: int, particles: int | None, generator: torch.Generator
                ) -> tuple[Tensor, Tensor | None]:
    """One step's draw from ``canvases [M, H, W]``: the indices ``[batch]`` of the chosen canvases
    (with replacement) and, when ``particles`` is not None, that many particles from each of them
    ``[batch, particles, 2]``, both with ``generator``, in that order."""
    indices = torch.randint(len(canvases), (batch,), generator=generator)
    return indices, None if particles is None else sample_particles(canvases[indices], particles, generator)


def canvas_stream(canvases: np.ndarray | Tensor, batch: int, particles: int | None, steps: int,
                  generator: torch.Generator) -> CanvasStream:
    """The draws of ``steps`` consecutive steps (:func:`canvas_draw`), on the CPU: what ``steps`` calls of
    ``canvas_batches(canvases, batch, particles, generator)`` give."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int (the training steps of the stream), got {steps!r}")
    data = torch.as_tensor(canvases, dtype=torch.float32)
    draws = [canvas_draw(data, batch, particles, generator) for _ in range(steps)]
    return CanvasStream(torch.stack([indices for indices, _ in draws]),
                        None if particles is None else torch.stack([drawn for _, drawn in draws]))


def stack_streams(streams: Sequence[CanvasStream], device: str | torch.device) -> CanvasStream:
    """The streams of ``S`` seeds (equal shapes, all with particles or none) stacked on ``device`` as the
    ensemble reads them: ``indices [steps, S, B]``, ``particles [steps, S, B, n, 2]`` or None."""
    shapes = {(tuple(s.indices.shape), None if s.particles is None else tuple(s.particles.shape)) for s in streams}
    if len(shapes) != 1:
        raise ValueError(f"stack_streams needs streams of one budget (equal steps, batch and particles), got "
                         f"shapes {sorted(shapes, key=str)}")
    indices = torch.stack([s.indices.to(device) for s in streams], dim=1)
    if streams[0].particles is None:
        return CanvasStream(indices, None)
    return CanvasStream(indices, torch.stack([s.particles.to(device) for s in streams], dim=1))


def stacked_sampler(canvases: Tensor, stream: CanvasStream) -> Callable[[], tuple[Tensor, Tensor, None]]:
    """A sampler for :func:`~setfuncs.ensemble.fit_ensemble` whose ``t``-th call returns step ``t`` of the
    stacked ``stream``: the canvases ``canvases[indices[t]]`` ``[S, B, H, W]`` (gathered where
    ``canvases [M, H, W]`` and the stream are), the particles ``[S, B, n, 2]``, and no mask.

    The image localiser reads no particles: its batches carry an empty particle tensor ``[S, B, 0, 2]``,
    so that every batch is a pair of tensors, which a captured CUDA graph copies into place."""
    steps, seeds, batch = stream.indices.shape
    empty = canvases.new_zeros(seeds, batch, 0, 2)
    position = iter(range(steps))

    def sample() -> tuple[Tensor, Tensor, None]:
        t = next(position)
        return canvases[stream.indices[t]], empty if stream.particles is None else stream.particles[t], None

    return sample
