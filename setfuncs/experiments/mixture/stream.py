r"""A seed's padded training stream made once, for every configuration that trains on it.

Run ``seed`` of every mixture configuration draws its batches from
``torch.Generator().manual_seed(TRAIN_SEED + seed)``: at step :math:`t` a population size
:math:`N_t` with :math:`P(N = n) \propto n`, then a batch of :math:`B` populations of :math:`N_t`
particles (:func:`~setfuncs.experiments.mixture.data.training_sampler`). All 56 configurations of a
seed therefore see one stream. An ensemble on a GPU pads every batch to the largest size,
:math:`N_{\max} = 150`, with a mask (:func:`~setfuncs.experiments.mixture.data.padded_training_sampler`),
so that its step has one shape and can be one CUDA graph.

Drawn step by step, the batches of ten seeds are made on the CPU, one small batch after another,
while the graphed step waits; here each seed's stream (``steps`` padded batches and their sizes) is
drawn once per worker process in the generator's order and cached, and the seeds' streams are
stacked on the device, where the ensemble reads batch :math:`t` of every seed from one tensor and
builds its mask :math:`m_{s,b,i} = [\,i < N_{t,s}\,]` there. The batches are exactly those of
:func:`~setfuncs.experiments.mixture.data.padded_training_sampler` called ``steps`` times
(``tests/test_mixture_padding.py``).
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor

from ..caching import shared_cache
from ..sweeps import TRAIN_SEED
from .data import TRAIN_SIZES, training_sampler

__all__ = ["training_stream", "ensemble_stream", "stacked_sampler"]


@shared_cache(maxsize=16)
def training_stream(seed: int, steps: int, batch: int) -> tuple[Tensor, Tensor, Tensor]:
    """The first ``steps`` training batches of run ``seed`` on the CPU, padded to ``TRAIN_SIZES[1]``:
    ``x [steps, batch, N_max, 2]`` (zeros past each step's size), ``y [steps, batch, 1]`` and the sizes
    ``[steps]`` (cached per process; shared: do not modify)."""
    sample, largest = training_sampler(batch, torch.Generator().manual_seed(TRAIN_SEED + seed)), TRAIN_SIZES[1]
    x = torch.zeros(steps, batch, largest, 2)
    y = torch.empty(steps, batch, 1)
    sizes = torch.empty(steps, dtype=torch.long)
    for t in range(steps):
        xt, y[t], _ = sample()
        sizes[t] = xt.shape[1]
        x[t, :, :xt.shape[1]] = xt
    return x, y, sizes


@shared_cache(maxsize=1)
def ensemble_stream(seeds: tuple[int, ...], steps: int, batch: int, device: str) -> tuple[Tensor, Tensor, Tensor]:
    """The streams of ``seeds`` stacked as an ensemble reads them, on ``device``: ``x [steps, S, batch,
    N_max, 2]``, ``y [steps, S, batch, 1]`` and the sizes ``[steps, S]`` (the last one cached: the next
    configuration reuses it). Drawn on the CPU, one seed after another (each seed's draws are a loop
    of small operations that hold the GIL)."""
    streams = [training_stream(seed, steps, batch) for seed in seeds]
    x, y, sizes = (torch.stack([stream[k] for stream in streams], dim=1) for k in range(3))
    if not bool((sizes >= 1).all()):      # checked once here: fit_ensemble reads no mask values on a GPU
        raise ValueError(f"the mixture stream of seeds {seeds} holds an empty population; TRAIN_SIZES must start at 1 "
                         f"or more")
    return x.to(device), y.to(device), sizes.to(device)


def stacked_sampler(x: Tensor, y: Tensor, sizes: Tensor) -> Callable[[], tuple[Tensor, Tensor, Tensor]]:
    """A sampler for :func:`~setfuncs.ensemble.fit_ensemble` that returns ``(x[t], y[t], mask_t)`` at its
    ``t``-th call, with ``mask_t[s, b, i] = i < sizes[t, s]`` made where the stream lies."""
    position = iter(range(len(x)))
    particles = torch.arange(x.shape[3], device=x.device)

    def sample() -> tuple[Tensor, Tensor, Tensor]:
        t = next(position)
        mask = (particles < sizes[t][:, None]).unsqueeze(1).expand(-1, x.shape[2], -1)
        return x[t], y[t], mask

    return sample
